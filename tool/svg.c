// SPDX-License-Identifier: GPL-2.0
/*
 * SVG flamegraph writer (see svg.h): merges the samples into a call tree
 * (root: the command name), lays it out root at the bottom with widths
 * proportional to samples (to time in a profile with off-CPU samples,
 * which sit under a '[off-cpu]' frame), and writes one <g> per frame carrying its
 * layout in data attributes, so the inline script can re-lay the tree
 * when a frame is clicked (zoom), highlight a search, and show details on
 * hover. Colours: a hue per object, orange for the kernel, grey for
 * unknown code. Called from the report command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report_model.h"
#include "svg.h"

struct node {
	const char	*name;
	const char	*dso;
	int		kernel;
	uint64_t	count;
	struct node	*child;
	struct node	*next;
};

struct svg_ctx {
	FILE		*f;
	uint64_t	total;
	int		max_depth;
	double		width;		/* drawing width in pixels */
	double		xpad;
	double		fh;		/* frame height */
	double		top;		/* y of the deepest row */
};

#define SVG_WIDTH	1200.0
#define SVG_FRAME_H	16.0
#define SVG_MIN_PX	0.1	/* narrower frames are left out */
#define SVG_CHAR_PX	7.0	/* average glyph width at 12px */

static struct node *node_child(struct node *p, const char *name,
			       const char *dso, int kernel)
{
	struct node *n, **pp;

	for (pp = &p->child; *pp; pp = &(*pp)->next) {
		int c = strcmp((*pp)->name, name);

		if (!c)
			return *pp;
		if (c > 0)
			break;	/* children stay sorted by name */
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->name = name;
	n->dso = dso;
	n->kernel = kernel;
	n->next = *pp;
	*pp = n;
	return n;
}

static void node_free(struct node *n)
{
	struct node *c, *next;

	for (c = n->child; c; c = next) {
		next = c->next;
		node_free(c);
	}
	free(n);
}

static int tree_build(const struct uwprof_rep *r, struct node *root,
		      int *max_depth)
{
	const struct uwprof_rep_sample *s;
	const struct uwprof_rep_frame *f;
	const char *mark;
	struct node *n;
	uint32_t i, nr, k;
	uint64_t w;
	size_t si;
	int d;

	for (si = 0; si < r->nr_samples; si++) {
		s = &r->samples[si];
		nr = s->nr_kernel + s->nr_user;
		w = uwprof_rep_weight(r, s);
		root->count += w;
		n = node_child(root, s->comm, NULL, 0);
		if (!n)
			return -ENOMEM;
		n->count += w;
		if (uwprof_rep_off_cpu(s)) {
			n = node_child(n, UWPROF_REP_OFF_CPU_MARK, NULL, 0);
			if (!n)
				return -ENOMEM;
			n->count += w;
		}
		mark = r->mark_incomplete ? uwprof_rep_incomplete_mark(r, s) : NULL;
		if (mark) {
			n = node_child(n, mark, NULL, 0);
			if (!n)
				return -ENOMEM;
			n->count += w;
		}
		for (i = 1; i <= nr; i++) {
			k = i <= s->nr_user ? nr - i :
					      s->nr_kernel - (i - s->nr_user);
			f = &r->frames[s->frames[k]];
			n = node_child(n, f->folded, f->dso, f->kernel);
			if (!n)
				return -ENOMEM;
			n->count += w;
		}
		d = (int)nr + 1 + !!mark + uwprof_rep_off_cpu(s);
		if (d > *max_depth)
			*max_depth = d;
	}
	return 0;
}

static void xml_put(FILE *f, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			/* control characters are not allowed in XML 1.0 */
			fputc((unsigned char)s[i] < 0x20 ? '?' : s[i], f);
		}
	}
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261U;

	while (s && *s)
		h = (h ^ (uint8_t)*s++) * 16777619U;
	return h;
}

static void node_colour(const struct node *n, char *buf, size_t len)
{
	uint32_t hd = name_hash(uwprof_rep_basename(n->dso));
	uint32_t hn = name_hash(n->name);

	if (!n->dso && !n->kernel)	/* the comm root, or unknown code */
		snprintf(buf, len, "hsl(0,0%%,%u%%)", 70 + hn % 12);
	else if (n->kernel)
		snprintf(buf, len, "hsl(%u,85%%,%u%%)", 20 + hn % 16,
			 55 + hn % 10);
	else
		snprintf(buf, len, "hsl(%u,%u%%,%u%%)", 40 + hd % 260,
			 55 + hd % 20, 58 + hn % 12);
}

static void node_emit(struct svg_ctx *c, const struct node *n, double x,
		      int depth)
{
	double w = (double)n->count / (double)c->total * c->width;
	double y = c->top + (double)(c->max_depth - depth) * c->fh;
	const struct node *ch;
	char colour[40];
	size_t fit;
	double cx;

	if (w < SVG_MIN_PX)
		return;
	node_colour(n, colour, sizeof(colour));
	fprintf(c->f, "<g class=\"f\" data-d=\"%d\" data-x=\"%.4f\" data-w=\"%.4f\" data-n=\"%llu\" data-o=\"",
		depth, x, w, (unsigned long long)n->count);
	xml_put(c->f, n->dso ? n->dso : n->kernel ? "[kernel]" : "", (size_t)-1);
	fprintf(c->f, "\"><title>");
	xml_put(c->f, n->name, (size_t)-1);
	fprintf(c->f, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
		c->xpad + x, y, w, c->fh - 1, colour, c->xpad + x + 3,
		y + c->fh - 4.5);
	fit = w > 3 * SVG_CHAR_PX ? (size_t)((w - 6) / SVG_CHAR_PX) : 0;
	if (fit) {
		if (strlen(n->name) <= fit) {
			xml_put(c->f, n->name, fit);
		} else {
			xml_put(c->f, n->name, fit - 2);
			fputs("..", c->f);
		}
	}
	fputs("</text></g>\n", c->f);
	for (cx = x, ch = n->child; ch; ch = ch->next) {
		node_emit(c, ch, cx, depth + 1);
		cx += (double)ch->count / (double)c->total * c->width;
	}
}

/* The interactive part; frames carry data-d/x/w/n/o and a <title>. */
static const char svg_script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var W, PAD, FH, TOP, MAXD, TOTAL, UNIT, frames, det, zoomed = null, term = null;\n"
"function init(evt) {\n"
"  var s = document.documentElement;\n"
"  W = +s.getAttribute('data-w'); PAD = +s.getAttribute('data-pad');\n"
"  FH = +s.getAttribute('data-fh'); TOP = +s.getAttribute('data-top');\n"
"  MAXD = +s.getAttribute('data-maxd'); TOTAL = +s.getAttribute('data-total');\n"
"  UNIT = s.getAttribute('data-unit');\n"
"  frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));\n"
"  det = document.getElementById('details');\n"
"  frames.forEach(function (g) {\n"
"    g.onclick = function () { zoom(g); };\n"
"    g.onmouseover = function () { show(g); };\n"
"    g.onmouseout = function () { det.textContent = ' '; };\n"
"  });\n"
"  document.getElementById('reset').onclick = function () { zoom(null); };\n"
"  /* #zoom=NAME and #search=REGEX in the URL: links to a view */\n"
"  decodeURIComponent(location.hash.substring(1)).split('&').forEach(function (kv) {\n"
"    var i = kv.indexOf('='), k = kv.substring(0, i), v = kv.substring(i + 1);\n"
"    if (k === 'search') find(v);\n"
"    if (k === 'zoom') frames.some(function (g) { return nm(g) === v && (zoom(g), true); });\n"
"  });\n"
"  document.getElementById('search').onclick = ask;\n"
"  document.onkeydown = function (e) {\n"
"    if ((e.ctrlKey && e.key === 'f') || e.key === '/') { e.preventDefault(); ask(); }\n"
"    if (e.key === 'Escape') { zoom(null); find(null); }\n"
"  };\n"
"}\n"
"function nm(g) { return g.querySelector('title').textContent; }\n"
"function pct(n) { return (100 * n / TOTAL).toFixed(2) + '%'; }\n"
"function show(g) {\n"
"  var o = g.getAttribute('data-o'), n = +g.getAttribute('data-n');\n"
"  det.textContent = nm(g) + (o ? '  (' + o + ')' : '') + '  ' + n +\n"
"    ' ' + UNIT + ', ' + pct(n);\n"
"}\n"
"function fit(g, w) {\n"
"  var t = g.querySelector('text'), s = nm(g), n = Math.floor((w - 6) / 7);\n"
"  if (w < 21 || n < 3) t.textContent = '';\n"
"  else t.textContent = s.length <= n ? s : s.substring(0, n - 2) + '..';\n"
"}\n"
"function zoom(z) {\n"
"  var zx = 0, zw = W, zd = 0;\n"
"  zoomed = z;\n"
"  if (z) { zx = +z.getAttribute('data-x'); zw = +z.getAttribute('data-w');\n"
"           zd = +z.getAttribute('data-d'); }\n"
"  document.getElementById('reset').style.display = z ? 'inline' : 'none';\n"
"  frames.forEach(function (g) {\n"
"    var x = +g.getAttribute('data-x'), w = +g.getAttribute('data-w'),\n"
"        d = +g.getAttribute('data-d'), r = g.querySelector('rect'),\n"
"        t = g.querySelector('text'), nx, nw;\n"
"    var inside = x >= zx - 1e-6 && x + w <= zx + zw + 1e-6;\n"
"    var below = d < zd && x <= zx + 1e-6 && x + w >= zx + zw - 1e-6;\n"
"    if (!(inside && d >= zd) && !below) { g.style.display = 'none'; return; }\n"
"    g.style.display = '';\n"
"    nx = below ? 0 : (x - zx) * W / zw; nw = below ? W : w * W / zw;\n"
"    r.setAttribute('x', PAD + nx); r.setAttribute('width', nw);\n"
"    t.setAttribute('x', PAD + nx + 3);\n"
"    g.style.opacity = below ? 0.6 : 1;\n"
"    fit(g, nw);\n"
"  });\n"
"}\n"
"function ask() {\n"
"  var s = prompt('Search (regular expression)', term || '');\n"
"  if (s !== null) find(s === '' ? null : s);\n"
"}\n"
"function find(s) {\n"
"  var re = null, m = document.getElementById('matched'), seen = [], sum = 0;\n"
"  term = s;\n"
"  if (s) { try { re = new RegExp(s); } catch (e) { m.textContent = 'bad regex'; return; } }\n"
"  frames.forEach(function (g) {\n"
"    var r = g.querySelector('rect'), x, w;\n"
"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
"    if (re && re.test(nm(g))) {\n"
"      r.setAttribute('fill', 'rgb(230,0,230)');\n"
"      x = +g.getAttribute('data-x'); w = +g.getAttribute('data-w');\n"
"      if (!seen.some(function (p) { return x >= p[0] && x + w <= p[1] + 1e-6; })) {\n"
"        seen.push([x, x + w]); sum += +g.getAttribute('data-n');\n"
"      }\n"
"    } else r.setAttribute('fill', r.getAttribute('data-fill'));\n"
"  });\n"
"  m.textContent = re ? 'matched ' + pct(sum) : '';\n"
"  document.getElementById('search').textContent = re ? 'Search: ' + s : 'Search';\n"
"}\n"
"]]></script>\n";

int uwprof_svg_write(const struct uwprof_rep *r, FILE *f, const char *title)
{
	struct node *root = calloc(1, sizeof(*root));
	struct svg_ctx c = { .f = f, .width = SVG_WIDTH - 20, .xpad = 10,
			     .fh = SVG_FRAME_H, .top = 60 };
	double height;
	int ret;

	if (!root)
		return -ENOMEM;
	root->name = "all";
	ret = tree_build(r, root, &c.max_depth);
	if (ret)
		goto free;
	c.total = root->count ? root->count : 1;
	height = c.top + (c.max_depth + 1) * c.fh + 40;
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" onload=\"init(evt)\" data-w=\"%.2f\" data-pad=\"%.0f\" data-fh=\"%.0f\" data-top=\"%.0f\" data-maxd=\"%d\" data-total=\"%llu\" data-unit=\"%s\">\n",
		SVG_WIDTH, height, SVG_WIDTH, height, c.width, c.xpad, c.fh,
		c.top, c.max_depth, (unsigned long long)c.total,
		uwprof_rep_by_time(r) ? "ns" : "samples");
	fputs("<style>\n"
	      "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
	      "g.f { cursor: pointer; }\n"
	      "g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      "g.f text { pointer-events: none; }\n"
	      ".ui { cursor: pointer; fill: #336; }\n"
	      "#title { font-size: 17px; text-anchor: middle; }\n"
	      "</style>\n", f);
	fputs(svg_script, f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n",
		SVG_WIDTH, height);
	fprintf(f, "<text id=\"title\" x=\"%.0f\" y=\"24\">Flame graph: ",
		SVG_WIDTH / 2);
	xml_put(f, title ? title : "", 200);
	if (uwprof_rep_by_time(r))
		fprintf(f, " (%.3f s: %s and off-CPU time)</text>\n",
			root->count / 1e9, r->event);
	else
		fprintf(f, " (%llu samples of %s)</text>\n",
			(unsigned long long)root->count, r->event);
	fprintf(f, "<text id=\"reset\" class=\"ui\" x=\"10\" y=\"24\" style=\"display:none\">Reset zoom</text>\n"
		   "<text id=\"search\" class=\"ui\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		   "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n"
		   "<text id=\"details\" x=\"10\" y=\"%.0f\"> </text>\n",
		SVG_WIDTH - 10, SVG_WIDTH - 10, height - 12, height - 12);
	/* Depth 0 is the 'all' row at the bottom. */
	node_emit(&c, root, 0, 0);
	fputs("</svg>\n", f);
	ret = ferror(f) ? -(errno ? errno : EIO) : 0;
free:
	node_free(root);
	return ret;
}
