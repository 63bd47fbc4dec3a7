/*
 * abi1_sparse_tmpl.h - the sparse ABI 1 forward pass of abi1_sparse.c,
 * instantiated once per instruction set with ST_SFX (name suffix),
 * ST_ATTR (a target attribute or nothing) and ST_VW (floats per vector).
 * Not a public header.
 *
 * Each output element is accumulated exactly as ABI 1's linear kernel
 * does it: the bias, then x[i] w[i][j] for the non-zero inputs in
 * ascending i, one IEEE addition after another (the build has
 * -ffp-contract=off).  Vectors only put several j side by side.
 */
#define ST_CAT2(a, b) a##_##b
#define ST_CAT(a, b) ST_CAT2(a, b)
#define ST(name) ST_CAT(name, ST_SFX)

typedef float ST(vf) __attribute__((vector_size(ST_VW * 4), aligned(4),
				     may_alias));
typedef int32_t ST(vi) __attribute__((vector_size(ST_VW * 4), aligned(4),
				      may_alias));

#define SVF ST(vf)
#define SVI ST(vi)
#define SLD(p) (*(const SVF *)(const void *)(p))
#define SSTO(p, v) (*(SVF *)(void *)(p) = (v))

/*
 * out[0..NV*VW) = b + sum over t of tx[t] * W[row[t]] (rows of ld
 * floats), NV vectors kept in registers.
 */
#define ST_ACCUM(NV)                                                           \
	do {                                                                   \
		SVF acc[NV];                                                   \
		for (int v = 0; v < (NV); v++)                                 \
			acc[v] = SLD(b + (size_t)v * ST_VW);                   \
		for (size_t t = 0; t < nt; t++) {                              \
			const float *w = W + (size_t)row[t] * ld;              \
			SVF xv = tx[t] - (SVF){ 0 };                           \
			for (int v = 0; v < (NV); v++)                         \
				acc[v] = acc[v] + xv * SLD(w + (size_t)v * ST_VW); \
		}                                                              \
		for (int v = 0; v < (NV); v++)                                 \
			SSTO(out + (size_t)v * ST_VW, acc[v]);                 \
	} while (0)

ST_ATTR static void
ST(layer)(const float *restrict b, const float *restrict W, size_t ld,
	  const float *restrict tx, const uint32_t *restrict row, size_t nt,
	  float *restrict out)
{
	size_t nv = ld / ST_VW;

	switch (nv) {
	case 1: ST_ACCUM(1); return;
	case 2: ST_ACCUM(2); return;
	case 3: ST_ACCUM(3); return;
	case 4: ST_ACCUM(4); return;
	default:
		break;
	}
	/* Wide layers: tiles of 4 vectors, each walking all terms in order. */
	for (size_t j = 0; j < ld; j += 4 * ST_VW) {
		size_t left = (ld - j) / ST_VW;
		const float *bj = b + j;
		float *oj = out + j;
		if (left >= 4) {
			SVF a0 = SLD(bj), a1 = SLD(bj + ST_VW),
			    a2 = SLD(bj + 2 * ST_VW), a3 = SLD(bj + 3 * ST_VW);
			for (size_t t = 0; t < nt; t++) {
				const float *w = W + (size_t)row[t] * ld + j;
				SVF xv = tx[t] - (SVF){ 0 };
				a0 = a0 + xv * SLD(w);
				a1 = a1 + xv * SLD(w + ST_VW);
				a2 = a2 + xv * SLD(w + 2 * ST_VW);
				a3 = a3 + xv * SLD(w + 3 * ST_VW);
			}
			SSTO(oj, a0);
			SSTO(oj + ST_VW, a1);
			SSTO(oj + 2 * ST_VW, a2);
			SSTO(oj + 3 * ST_VW, a3);
			continue;
		}
		for (size_t v = 0; v < left; v++) {
			SVF a = SLD(bj + v * ST_VW);
			for (size_t t = 0; t < nt; t++)
				a = a + tx[t] * SLD(W + (size_t)row[t] * ld + j + v * ST_VW);
			SSTO(oj + v * ST_VW, a);
		}
	}
}

/*
 * ReLU as ABI 1 computes it in eval mode (z > 0 ? z : +0), then the
 * list of the units that are not zero, in order: the next layer's terms.
 */
ST_ATTR static size_t
ST(relu_terms)(float *restrict z, size_t n, size_t ld, float *restrict tx,
	       uint32_t *restrict row)
{
	const SVF zero = { 0 };
	size_t k = 0;

	for (size_t j = 0; j < ld; j += ST_VW) {
		SVF v = SLD(z + j);
		SVI on = v > zero;
		SSTO(z + j, (SVF)((SVI)v & on));
	}
	/* Branch-free compaction: the unit's slot is written either way. */
	for (size_t i = 0; i < n; i++) {
		tx[k] = z[i];
		row[k] = (uint32_t)i;
		k += z[i] > 0.0f;
	}
	return k;
}

ST_ATTR static void
ST(forward)(const struct abi1_sparse *sc, struct sp_scratch *s,
	    const float *tx0, const uint32_t *row0, size_t nt0, float *probs)
{
	const float *tx = tx0;
	const uint32_t *row = row0;
	size_t nt = nt0;
	uint32_t L = sc->nlayers;
	float mx, sum;

	for (uint32_t l = 0; l < L; l++) {
		ST(layer)(sc->b[l], sc->w[l], sc->ld[l], tx, row, nt, s->z);
		if (l + 1 == L)
			break;
		nt = ST(relu_terms)(s->z, sc->sizes[l + 1], sc->ld[l], s->tx,
				    s->row);
		tx = s->tx;
		row = s->row;
	}
	abi1_softmax(sc->k, s->z, 1, sc->nclasses, probs, &mx, &sum);
}

#undef SVF
#undef SVI
#undef SLD
#undef SSTO
#undef ST_ACCUM
#undef ST
#undef ST_CAT
#undef ST_CAT2
