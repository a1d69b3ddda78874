// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target aimed at the CFI parser and the CFA machine: the input
 * becomes the contents of one .eh_frame or .debug_frame section of a
 * minimal, valid ELF object built around it, so mutations land in CIEs,
 * FDEs and their programs instead of in ELF headers.
 *
 * Input: byte 0 selects the object (bit 0: aarch64, else x86_64; bit 1:
 * .debug_frame, else .eh_frame; bits 2-7: section address in 4 KiB
 * pages); the rest is the section. A compiled blob must pass the tool's
 * check and, for the host's arch, the module's (blob_exercise.h).
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob_exercise.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define SEC_OFF		0x100
#define MAX_SEC		(1 << 20)

static const char shstr[] = "\0.eh_frame\0.debug_frame\0.shstrtab";

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	size_t sec_len, str_off, sh_off, total;
	struct uwprof_table_stats st;
	struct uwprof_blob b;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	unsigned char *img;
	char err[256];
	int arm, dbg;

	if (size < 1 || size - 1 > MAX_SEC)
		return 0;
	arm = data[0] & 1;
	dbg = (data[0] >> 1) & 1;
	sec_len = size - 1;
	str_off = SEC_OFF + sec_len;
	sh_off = (str_off + sizeof(shstr) + 7) & ~(size_t)7;
	total = sh_off + 3 * sizeof(Elf64_Shdr);
	img = calloc(1, total);
	if (!img)
		return 0;
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = arm ? EM_AARCH64 : EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = sh_off;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	ph = (Elf64_Phdr *)(img + sizeof(*eh));
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_filesz = total;
	ph->p_memsz = 1ULL << 40;	/* any FDE address counts as code */
	ph->p_align = 4096;
	memcpy(img + SEC_OFF, data + 1, sec_len);
	memcpy(img + str_off, shstr, sizeof(shstr));
	sh = (Elf64_Shdr *)(img + sh_off);
	sh[1].sh_name = dbg ? 11 : 1;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = dbg ? 0 : SHF_ALLOC;
	sh[1].sh_addr = (Elf64_Addr)(data[0] >> 2) << 12;
	sh[1].sh_offset = SEC_OFF;
	sh[1].sh_size = sec_len;
	sh[1].sh_addralign = 8;
	sh[2].sh_name = 24;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = str_off;
	sh[2].sh_size = sizeof(shstr);
	sh[2].sh_addralign = 1;

	if (!uwprof_table_compile_mem(img, total, "fuzz-cfi", &b, &st)) {
		if (uwprof_blob_check(b.data, b.size, err, sizeof(err))) {
			fprintf(stderr, "compiled blob fails its check: %s\n", err);
			abort();
		}
		bx_blob(b.data, b.size, b.arch == UWPROF_ARCH_ID);
	}
	uwprof_blob_free(&b);
	free(img);
	return 0;
}
