// SPDX-License-Identifier: GPL-2.0
/* Input for the compiler run of the real-program suite: enough C to keep
 * cc1 busy for a while (macro-expanded tables, many small functions). */
#define F(n) static int f##n(int x) { int s = 0; for (int i = 0; i < x; i++) s += (i * n) ^ (s >> 3); return s + n; }
#define G(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
#define H(n) G(n##0) G(n##1) G(n##2) G(n##3) G(n##4) G(n##5) G(n##6) G(n##7) G(n##8) G(n##9)
H(1)
#define C(n) + f##n(v)
#define CG(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7) C(n##8) C(n##9)
#define CH(n) CG(n##0) CG(n##1) CG(n##2) CG(n##3) CG(n##4) CG(n##5) CG(n##6) CG(n##7) CG(n##8) CG(n##9)
int cc_input(int v)
{
	return 0 CH(1);
}
