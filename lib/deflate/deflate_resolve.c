/* SPDX-License-Identifier: MIT */
/* deflate_resolve.c - marker resolution: the 16-bit symbols of a stream decoded without its
 * window (bytes, and markers for the window's bytes) made bytes once the window is known. */
#include <stdatomic.h>
#include <string.h>

#include "common/cpu_features.h"
#include "deflate_internal.h"

#define DEFLATE_WINDOW 32768u /* the history a marker can name */

/* The first symbol of sym[0..n) that is neither a byte nor a marker window_len can resolve:
 * its error. */
static zn_result first_unresolvable(const uint16_t *sym, size_t n, uint32_t lowest)
{
	for (size_t i = 0; i < n; i++) {
		if (sym[i] < 256)
			continue;
		SAFETY_CHECK(sym[i] >= ZN_INFLATE_MARKER, ZN_ERR_INVALID_ARG);
		SAFETY_CHECK(sym[i] >= lowest, ZN_ERR_BAD_DISTANCE);
	}
	return ZN_OK;
}

size_t zn_resolve_generic(const uint16_t *sym, size_t n, const uint8_t *wf, uint32_t lowest,
                          uint8_t *o)
{
	/* A symbol is bad when 256 <= s < lowest: one unsigned compare per symbol, ORed up and
	 * tested once per block. Blocks of 16 symbols are loaded before any store (narrowing in
	 * place), and the all-bytes case, by far the most common one outside text, becomes a
	 * few vector instructions. Other blocks look each symbol up in the window whatever it is
	 * and select: a load and a conditional move, where a branch per symbol mispredicted on
	 * text (markers are 18-21% of its symbols in whole chunks), and are stored one by one
	 * (a byte array stored whole after bytewise writes stalls on store forwarding). */
	const uint16_t span = (uint16_t)(lowest - 256);
	size_t i = 0;
	for (; n - i >= 16; i += 16) {
		uint16_t v[16];
		uint32_t any = 0, bad = 0;
		memcpy(v, sym + i, sizeof(v));
		for (unsigned k = 0; k < 16; k++)
			any |= v[k];
		if (any < 256) {
			uint8_t b[16];
			for (unsigned k = 0; k < 16; k++)
				b[k] = (uint8_t)v[k];
			memcpy(o + i, b, sizeof(b));
			continue;
		}
		for (unsigned k = 0; k < 16; k++)
			bad |= (uint16_t)(v[k] - 256) < span;
		if (unlikely(bad))
			break;
		for (unsigned k = 0; k < 16; k++) {
			uint32_t s = v[k];
			uint8_t t = wf[s & (DEFLATE_WINDOW - 1)];
			o[i + k] = s < 256 ? (uint8_t)s : t;
		}
	}
	return i;
}

zn_result zn_inflate_resolve_markers(const uint16_t *sym, size_t n, const void *window,
                                     size_t window_len, void *out)
{
	static _Atomic(zn_resolve_fn) resolve_impl;
	SAFETY_CHECK((sym || !n) && (out || !n) && window_len <= DEFLATE_WINDOW &&
	                     (window || !window_len),
	             ZN_ERR_INVALID_ARG);
	zn_resolve_fn kernel = atomic_load_explicit(&resolve_impl, memory_order_relaxed);
	if (!kernel) {
		kernel = zn_select_resolve(zn_cpu_features());
		atomic_store_explicit(&resolve_impl, kernel, memory_order_relaxed);
	}
	/* Markers index the 32 KiB before the start; `window` holds its last window_len bytes,
	 * so marker `lowest` is window[0]. The kernels take all 32 KiB with a little readable
	 * slack after it: a shorter window is put at the end of 32 KiB of zeros (markers before
	 * it are refused by the range check). One 32 KiB copy per call. */
	uint8_t wf[DEFLATE_WINDOW + 64];
	const uint32_t lowest = ZN_INFLATE_MARKER + (DEFLATE_WINDOW - (uint32_t)window_len);
	memset(wf, 0, DEFLATE_WINDOW - window_len);
	if (window_len)
		memcpy(wf + DEFLATE_WINDOW - window_len, window, window_len);
	memset(wf + DEFLATE_WINDOW, 0, 64);
	const uint8_t *in_window = wf;
	uint8_t *o = out;
	size_t i = kernel(sym, n, in_window, lowest, o);
	if (n - i >= 16) {
		uint16_t v[16];
		memcpy(v, sym + i, sizeof(v)); /* the block the kernel refused, before any store */
		return first_unresolvable(v, 16, lowest);
	}
	for (; i < n; i++) {
		uint32_t s = sym[i];
		if (unlikely((uint16_t)(s - 256) < (uint16_t)(lowest - 256)))
			return first_unresolvable(sym + i, 1, lowest);
		o[i] = s < 256 ? (uint8_t)s : wf[s & (DEFLATE_WINDOW - 1)];
	}
	return ZN_OK;
}
