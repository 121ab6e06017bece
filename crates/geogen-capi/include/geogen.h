/*
 * geogen.h: the C interface of geogen, a programmable terrain generator.
 *
 * Compile a GeoGen Script (or a Height-Slang program) once, then render any rectangle of any map
 * it yields, at any scale, into your own float or uint16_t buffer, from as many threads as you
 * like. The same script, settings and rectangle give the same bits on every machine and thread
 * count, and the pixels equal those of the `geogen render` command line.
 *
 * Link with libgeogen.so (or libgeogen.a and the system libraries docs/embedding.md lists), built by
 * `cargo build --release -p geogen-capi` into target/release/. docs/embedding.md has a complete
 * example and explains everything below at more length.
 *
 * Conventions
 *
 * - Every function that can fail returns a geogen_status (GEOGEN_OK is 0) and takes a last
 *   argument `geogen_error** error`. When `error` is not NULL, it receives NULL on success and a
 *   new error object on failure, which the caller frees with geogen_error_free. `error` may be
 *   NULL when the status is enough.
 * - A pointer the documentation does not call optional must not be NULL: NULL is refused with
 *   GEOGEN_ERROR_INVALID_ARGUMENT (code GGE4000) and never read. A pointer that is not NULL must
 *   point to what its type says (objects: made by this library and not yet freed).
 * - Strings passed in are NUL-terminated UTF-8; text that is not UTF-8 is refused. Strings
 *   returned are NUL-terminated UTF-8 owned by the object they come from, valid until that object
 *   is freed (version strings: for ever). Never free them yourself.
 * - Every object is freed by its own _free function, which accepts NULL.
 * - A panic inside the library is caught and returned as GEOGEN_ERROR_INTERNAL (GGE5000); no
 *   Rust unwinding ever crosses into your code. Running out of memory in an allocation the memory
 *   limit does not cover aborts the process, as Rust does; the limits exist to prevent that.
 *
 * Threads
 *
 * - geogen_script: immutable once compiled; any number of threads may render from one script at
 *   once (pass the same const pointer). Free it only when no thread uses it any more.
 * - geogen_settings and geogen_compile_options: plain values. Many threads may read one at once
 *   (renders only read their settings), but nothing may use one while a thread changes or frees
 *   it; give each thread its own (geogen_settings_clone) to change them independently.
 * - geogen_error: owned by the caller; use it from one thread at a time.
 *
 * ABI version
 *
 * GEOGEN_API_VERSION is the version of this interface; geogen_api_version() returns the version
 * of the library actually loaded. It is raised by every change of the interface (a function,
 * type, structure or constant added, removed or changed), so a program is built for exactly one
 * version: check geogen_api_version() == GEOGEN_API_VERSION at start-up when the library is
 * loaded at run time. Within one version nothing changes.
 */
#ifndef GEOGEN_H
#define GEOGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface: equal to what geogen_api_version() returns. */
#define GEOGEN_API_VERSION 1

/* What a function did: GEOGEN_OK, or the kind of its failure (the error object has the details). */
typedef int32_t geogen_status;
enum geogen_status_code {
    /* Success. */
    GEOGEN_OK = 0,
    /* A NULL where something is required, text that is not UTF-8, a buffer stride shorter than
       a row, an unknown parameter or map name, a bad parameter value, size, origin or scale
       (codes GGE4xxx). */
    GEOGEN_ERROR_INVALID_ARGUMENT = 1,
    /* The script does not compile, or fails while it runs (GGE1xxx, GGE2xxx, GGE6000, GGE7xxx,
       GGE8xxx): the error has the code, message, line and column. */
    GEOGEN_ERROR_SCRIPT = 2,
    /* The renderer failed for a reason other than a limit (GGE3xxx other than those below). */
    GEOGEN_ERROR_RENDER = 3,
    /* A limit was reached: memory (GGE3001, also a failed allocation of map memory), solve grid
       cells (GGE3002) or nesting (GGE3003), instructions, call depth, heap and the other script
       limits (GGE2501-GGE2508), script size (GGE1107), Height-Slang point budgets (GGE8209,
       GGE8301, GGE8302). */
    GEOGEN_ERROR_LIMIT = 4,
    /* A bug in geogen (a caught panic, GGE5000): please report it with the error's text. */
    GEOGEN_ERROR_INTERNAL = 5
};

/* Which limit geogen_compile_options_set_limit and geogen_settings_set_limit set. */
typedef int32_t geogen_limit;
enum geogen_limit_kind {
    /* Instructions one run of the script may execute (GGE2505). Default 100000000. */
    GEOGEN_LIMIT_INSTRUCTIONS = 1,
    /* Bytes the script's live arrays, strings and messages may hold (GGE2508). Default 1 GiB. */
    GEOGEN_LIMIT_HEAP_BYTES = 2,
    /* Bytes the renderer's memory plan may need for one render (GGE3001). Default 1 GiB. */
    GEOGEN_LIMIT_MEMORY_BYTES = 3,
    /* Nested function calls (GGE2501). Default 1000. */
    GEOGEN_LIMIT_CALL_DEPTH = 4,
    /* Nested code blocks within one call (GGE2502). Default 1000. */
    GEOGEN_LIMIT_BLOCK_DEPTH = 5,
    /* Values on the object stack (GGE2503). Default 100000. */
    GEOGEN_LIMIT_OBJECT_STACK = 6,
    /* Rendering steps (map operations) one run may record (GGE2504). Default 100000. */
    GEOGEN_LIMIT_RENDERING_STEPS = 7,
    /* Items in one array (GGE2506). Default 10000000. */
    GEOGEN_LIMIT_ARRAY_LENGTH = 8,
    /* Bytes in one string (GGE2507). Default 10000000. */
    GEOGEN_LIMIT_STRING_LENGTH = 9,
    /* Grid cells of a whole-map solve such as Drainage (GGE3002). Default 33554432. */
    GEOGEN_LIMIT_SOLVE_CELLS = 10,
    /* Bytes of script text (GGE1107); compile options only. Default 4 MiB. */
    GEOGEN_LIMIT_SCRIPT_BYTES = 11
};

/* The language of a script's text. */
typedef int32_t geogen_language;
enum geogen_language_kind {
    /* Height-Slang when the script's name ends in ".hs" (any case), else GeoGen Script. */
    GEOGEN_LANGUAGE_AUTO = 0,
    GEOGEN_LANGUAGE_GEOGEN_SCRIPT = 1,
    /* picogen's mkheightmap language: an infinite map "main", parameter UnitSize. */
    GEOGEN_LANGUAGE_HEIGHT_SLANG = 2
};

/* The Height-Slang dialect (docs/height-slang.md); GeoGen Script accepts only the default. */
typedef int32_t geogen_dialect;
enum geogen_dialect_kind {
    GEOGEN_DIALECT_DOCUMENTED = 0,
    GEOGEN_DIALECT_PICOGEN_2008 = 1
};

/* The type of a script parameter. */
typedef int32_t geogen_param_kind;
enum geogen_param_kind_code {
    GEOGEN_PARAM_BOOLEAN = 1,
    GEOGEN_PARAM_NUMBER = 2,
    /* Direction or an enum of the script: a set of named items, each with a number. */
    GEOGEN_PARAM_ENUM = 3
};

/* How a number parameter's value is forced after it is clamped to [min, max]. */
typedef int32_t geogen_restriction;
enum geogen_restriction_code {
    GEOGEN_RESTRICTION_NONE = 0,
    GEOGEN_RESTRICTION_INTEGERS = 1,
    GEOGEN_RESTRICTION_POWERS_OF_2 = 2,
    GEOGEN_RESTRICTION_POWERS_OF_10 = 3
};

/* A compiled script (opaque). */
typedef struct geogen_script geogen_script;
/* How to compile (opaque): language, dialect, limits. */
typedef struct geogen_compile_options geogen_compile_options;
/* What a render depends on besides the script and the rectangle (opaque): seed, parameters,
   map size, limits. */
typedef struct geogen_settings geogen_settings;
/* What went wrong (opaque). */
typedef struct geogen_error geogen_error;

/* What a script declares. Strings belong to the script (valid until geogen_script_free). */
typedef struct geogen_script_info {
    /* The metadata's Name, Description and Author ("" when not given). */
    const char* name;
    const char* description;
    const char* author;
    /* 1 when the map is finite along the axis, 0 when infinite. */
    int32_t width_finite;
    int32_t height_finite;
    /* The map sizes a finite axis allows, in map units, and its declared default (0 when
       none); all 0 for an infinite axis. */
    uint32_t width_min;
    uint32_t width_max;
    uint32_t width_default;
    uint32_t height_min;
    uint32_t height_max;
    uint32_t height_default;
    /* How many parameters (geogen_script_param) and maps (geogen_script_map_name) it has. */
    uint32_t param_count;
    uint32_t map_count;
} geogen_script_info;

/* One parameter. Strings belong to the script (valid until geogen_script_free). */
typedef struct geogen_param_info {
    const char* name;
    /* The label to show (the name when the script gives none) and the description ("" if none). */
    const char* label;
    const char* description;
    geogen_param_kind kind;
    /* Numbers only; GEOGEN_RESTRICTION_NONE for the other kinds. */
    geogen_restriction restriction;
    /* Numbers: the range. Booleans: 0 and 1. Enums: the smallest and largest item number. */
    double min;
    double max;
    /* Numbers: the default. Booleans: 0 or 1. Enums: the default item's number. */
    double default_value;
    /* The default as geogen_settings_set_param reads it: "0.4", "true", "Vertical". */
    const char* default_text;
    /* Enums: how many items (geogen_script_param_item); 0 for the other kinds. */
    uint32_t item_count;
} geogen_param_info;

/* ---- Versions (these two cannot fail) ---- */

/* The ABI version of the loaded library (see "ABI version" above). */
uint32_t geogen_api_version(void);

/* geogen's version, e.g. "0.1.0". Static: never freed. */
const char* geogen_version(void);

/* ---- Errors ---- */

/* The status the failing call returned. 0 for NULL. */
geogen_status geogen_error_status(const geogen_error* error);

/* The GGE code of the (first) problem, e.g. "GGE2202" ("" for NULL). */
const char* geogen_error_code(const geogen_error* error);

/* Its message, one line without the code ("" for NULL). */
const char* geogen_error_message(const geogen_error* error);

/* What to do about it, one line ("" when there is no hint, or for NULL). */
const char* geogen_error_hint(const geogen_error* error);

/* The 1-based line and column (in characters) in the script, or 0 when the problem is not tied
   to a place in it (a bad argument, a limit of the whole render). */
uint32_t geogen_error_line(const geogen_error* error);
uint32_t geogen_error_column(const geogen_error* error);

/* How many problems were reported (a script with several syntax errors reports them all); the
   accessors above describe the first. 0 for NULL. */
uint32_t geogen_error_count(const geogen_error* error);

/* Every problem as the command line prints it: code, message, file:line:column, the source
   line with a caret, the hint ("" for NULL). */
const char* geogen_error_text(const geogen_error* error);

/* Frees an error and its strings. NULL is fine. */
void geogen_error_free(geogen_error* error);

/* ---- Limits ---- */

/* The library's default value of a limit, as used when nothing sets it. */
geogen_status geogen_limit_default(geogen_limit limit, uint64_t* value, geogen_error** error);

/* ---- Compiling ---- */

/* New compile options with the defaults: GEOGEN_LANGUAGE_AUTO, GEOGEN_DIALECT_DOCUMENTED, the
   library's limits. Free with geogen_compile_options_free. */
geogen_status geogen_compile_options_new(geogen_compile_options** options, geogen_error** error);

geogen_status geogen_compile_options_set_language(geogen_compile_options* options,
                                                  geogen_language language,
                                                  geogen_error** error);

geogen_status geogen_compile_options_set_dialect(geogen_compile_options* options,
                                                 geogen_dialect dialect,
                                                 geogen_error** error);

/* Sets a limit (at least 1). Apart from GEOGEN_LIMIT_SCRIPT_BYTES, these become the compiled
   script's defaults for every render, which settings may override. */
geogen_status geogen_compile_options_set_limit(geogen_compile_options* options,
                                               geogen_limit limit,
                                               uint64_t value,
                                               geogen_error** error);

void geogen_compile_options_free(geogen_compile_options* options);

/* Compiles `source_length` bytes of script text. `name` names the script in error messages and
   chooses the language under GEOGEN_LANGUAGE_AUTO (a ".hs" name is Height-Slang). `options` is
   optional (NULL: the defaults). On success *script is a new script (free it with
   geogen_script_free); on failure it is NULL and the error has every problem the compiler found
   (status GEOGEN_ERROR_SCRIPT, or GEOGEN_ERROR_LIMIT for a script over the size limit). */
geogen_status geogen_script_compile(const char* name,
                                    const char* source,
                                    size_t source_length,
                                    const geogen_compile_options* options,
                                    geogen_script** script,
                                    geogen_error** error);

void geogen_script_free(geogen_script* script);

/* ---- What a script declares ---- */

geogen_status geogen_script_get_info(const geogen_script* script,
                                     geogen_script_info* info,
                                     geogen_error** error);

/* The parameter at `index` (0 to param_count - 1, in declaration order). */
geogen_status geogen_script_param(const geogen_script* script,
                                  uint32_t index,
                                  geogen_param_info* param,
                                  geogen_error** error);

/* Item `item` of the enum parameter `index`: its name and number. `name` and `value` are
   optional; the name belongs to the script. */
geogen_status geogen_script_param_item(const geogen_script* script,
                                       uint32_t index,
                                       uint32_t item,
                                       const char** name,
                                       double* value,
                                       geogen_error** error);

/* The name of the map at `index` (0 to map_count - 1, in the order the script's yields appear;
   "main" for an unnamed yield). The name belongs to the script. */
geogen_status geogen_script_map_name(const geogen_script* script,
                                     uint32_t index,
                                     const char** name,
                                     geogen_error** error);

/* Checks the settings' parameters against the script (unknown names GGE4001, unreadable values
   GGE4002) without rendering. */
geogen_status geogen_script_check_settings(const geogen_script* script,
                                           const geogen_settings* settings,
                                           geogen_error** error);

/* ---- Settings ---- */

/* New settings: seed 0, every parameter at its default, the map size derived from each render
   (as the command line does without --map-size), the script's limits. */
geogen_status geogen_settings_new(geogen_settings** settings, geogen_error** error);

/* A copy of `settings`, to change independently (for another thread, say). */
geogen_status geogen_settings_clone(const geogen_settings* settings,
                                    geogen_settings** copy,
                                    geogen_error** error);

void geogen_settings_free(geogen_settings* settings);

geogen_status geogen_settings_set_seed(geogen_settings* settings, uint32_t seed, geogen_error** error);

/* The seed as the command line's --seed reads it: a decimal number is used as is, any other text
   is hashed as the original GeoGen does. */
geogen_status geogen_settings_set_seed_text(geogen_settings* settings, const char* seed, geogen_error** error);

/* Sets a parameter by name to a value read as its type (numbers "5", "-2.5", "1e3"; booleans
   "true"/"false", "yes"/"no", "1"/"0"; enum items by name or number), as -p NAME=VALUE does. A
   later value of the same name replaces an earlier one. Names and values are checked against
   the script when a render (or geogen_script_check_settings) uses them. */
geogen_status geogen_settings_set_param(geogen_settings* settings,
                                        const char* name,
                                        const char* value,
                                        geogen_error** error);

/* geogen_settings_set_param with a number (finite; a boolean takes 0 or 1, an enum an item's
   number). */
geogen_status geogen_settings_set_param_number(geogen_settings* settings,
                                               const char* name,
                                               double value,
                                               geogen_error** error);

/* Forgets every parameter value set: all take their defaults again. */
geogen_status geogen_settings_clear_params(geogen_settings* settings, geogen_error** error);

/* The map size in map units of a finite axis (--map-size WxH); 0 for an axis leaves it derived
   from each render: floor(render size / scale), clamped to the script's range. Ignored along an
   infinite axis. To render a finite map in pieces, set it: otherwise each piece is a map of its
   own size. */
geogen_status geogen_settings_set_map_size(geogen_settings* settings,
                                           uint32_t width,
                                           uint32_t height,
                                           geogen_error** error);

/* Overrides one of the script's limits for renders with these settings (at least 1; not
   GEOGEN_LIMIT_SCRIPT_BYTES). */
geogen_status geogen_settings_set_limit(geogen_settings* settings,
                                        geogen_limit limit,
                                        uint64_t value,
                                        geogen_error** error);

/* ---- Rendering ---- */

/* Renders the rectangle of `width` x `height` pixels whose top-left pixel is (x, y), of the map
   named `map`, at `scale` (1: one pixel per map unit; 0.5: zoomed out twice; 0.001 to 10) as
   `geogen render SCRIPT --origin X,Y --size WxH --scale S` does, into `out`: pixel (i, j) of the
   rectangle goes to out[j * row_stride + i]. `row_stride` counts elements (floats), not bytes,
   and is at least `width`; `out` holds (height - 1) * row_stride + width elements. Elements
   between rows are not touched, nor is anything on failure.
   Heights are in [-1, 1]. `min` and `max` (optional) receive the least and greatest height
   written.
   Along a finite axis the rectangle must lie inside the map, which spans floor(map size x
   scale) pixels from 0 (else GGE4003).
   The script runs once per call (its Print output is discarded); a call allocates the render's
   memory plan (at most the memory limit) plus the finished map. */
geogen_status geogen_render_float(const geogen_script* script,
                                  const geogen_settings* settings,
                                  const char* map,
                                  int64_t x,
                                  int64_t y,
                                  uint32_t width,
                                  uint32_t height,
                                  double scale,
                                  float* out,
                                  size_t row_stride,
                                  float* min,
                                  float* max,
                                  geogen_error** error);

/* geogen_render_float quantised to 16 bits exactly as the command line's --format r16 (and
   png16) writes heights: round(h x 32767) + 32767, halves away from zero, so -1 is 0, 0 is 32767
   and 1 is 65534. The samples are native uint16_t (an r16 file holds them little-endian).
   `row_stride` counts elements (uint16_t); `min` and `max` (optional) receive the least and
   greatest sample written. */
geogen_status geogen_render_u16(const geogen_script* script,
                                const geogen_settings* settings,
                                const char* map,
                                int64_t x,
                                int64_t y,
                                uint32_t width,
                                uint32_t height,
                                double scale,
                                uint16_t* out,
                                size_t row_stride,
                                uint16_t* min,
                                uint16_t* max,
                                geogen_error** error);

#ifdef __cplusplus
}
#endif

#endif /* GEOGEN_H */
