/* jsonstr: any bytes as a JSON string (exec --json's streams, error messages). */
#ifndef HAKO_LIB_JSONSTR_H
#define HAKO_LIB_JSONSTR_H

#include <stddef.h>
#include <stdio.h>

/* Where escaped text goes, a piece at a time.  A piece that starts with a
 * byte below 0x80 other than '\\' is a run of plain ASCII and may be cut
 * anywhere; any other piece (an escape, one UTF-8 character) is whole. */
typedef void (*jsonstr_sink) (void *ctx, const char *piece, size_t n);

/* The body of a JSON string (no quotes) for LEN bytes of DATA in no
 * particular encoding: valid UTF-8 is kept (U+2028 and U+2029 escaped),
 * control characters, quotes and backslashes are escaped, and each invalid
 * sequence (a maximal subpart, as Unicode recommends) becomes \ufffd.  The
 * result is valid JSON whatever the bytes. */
void jsonstr_escape (const char *data, size_t len, jsonstr_sink put, void *ctx);

/* The quoted string, written to f. */
void jsonstr_fput (FILE *f, const char *data, size_t len);

/* The quoted string of the C string s appended at out[*n] (size bytes in
 * all, NUL-terminated): cut short, never inside an escape or a character,
 * when it does not fit.  Nothing is written unless 3 bytes (the quotes, the NUL)
 * fit. */
void jsonstr_append (char *out, size_t size, size_t *n, const char *s);

#endif
