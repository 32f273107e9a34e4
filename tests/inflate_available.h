/* inflate_available.h - whether the DEFLATE decoder is in this tree (it arrives from branch deflate). */
/*
 * The decoder tests and fuzz targets are written against the public API in znippy.h. While the
 * decoder's sources are not merged yet they would not link, so they build as a stub that says
 * so instead. Once lib/deflate_internal.h is present this is a no-op; remove it after the merge.
 */
#ifndef ZN_INFLATE_AVAILABLE_H
#define ZN_INFLATE_AVAILABLE_H
#if __has_include("deflate_internal.h")
#define ZN_HAVE_INFLATE 1
#endif
#endif
