/*
 * The C library used as a C program uses it, against include/geogen.h: compile, describe,
 * settings, renders of rectangles (whole, in halves, from four threads at once), quantised
 * samples, errors and NULL arguments. tests/c_api.rs compiles it against libgeogen.so and
 * libgeogen.a and runs it as
 *
 *     capi_test ISLAND_SCRIPT OUT
 *
 * It writes the island's 257 x 257 pixels at 300,128 (seed 7, map 1024 x 1024) as 16-bit samples
 * to OUT.r16 and as float heights to OUT.f32, both little-endian, for the Rust side to check the
 * samples against the command line's R16 encoder; prints one line per check and "all checks
 * passed" at the end; exits 1 at the first failed check.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geogen.h"

static int checks = 0;

#define CHECK(condition, ...)                                        \
    do {                                                             \
        if (!(condition)) {                                          \
            fprintf(stderr, "FAIL (%s:%d): ", __FILE__, __LINE__);   \
            fprintf(stderr, __VA_ARGS__);                            \
            fprintf(stderr, "\n");                                   \
            exit(1);                                                 \
        }                                                            \
        checks++;                                                    \
    } while (0)

/* A call that must succeed; on failure prints the library's error text. */
#define OK(call)                                                                         \
    do {                                                                                 \
        geogen_error* ok_error_ = NULL;                                                  \
        geogen_status ok_status_ = (call);                                               \
        if (ok_status_ != GEOGEN_OK) {                                                   \
            fprintf(stderr, "FAIL (%s:%d): %s returned %d\n%s\n", __FILE__, __LINE__, \
                    #call, (int)ok_status_, geogen_error_text(ok_error_));               \
            exit(1);                                                                     \
        }                                                                                \
        CHECK(ok_error_ == NULL, "a successful call left an error object");              \
    } while (0)
/* The error out-argument of OK's call. */
#define E (&ok_error_)

enum { SIDE = 257, ORIGIN_X = 300, ORIGIN_Y = 128, MAP_SIZE = 1024, THREADS = 4 };

/* Writes `count` 32-bit values (float or not) little-endian. */
static void write_le32(FILE* file, const void* values, size_t count) {
    for (size_t i = 0; i < count; i++) {
        uint32_t v;
        memcpy(&v, (const char*)values + 4 * i, 4);
        unsigned char bytes[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                                  (unsigned char)(v >> 24)};
        CHECK(fwrite(bytes, 1, 4, file) == 4, "cannot write");
    }
}

static FILE* create(const char* prefix, const char* extension) {
    char path[4096];
    CHECK(snprintf(path, sizeof path, "%s.%s", prefix, extension) < (int)sizeof path, "a path too long");
    FILE* file = fopen(path, "wb");
    CHECK(file != NULL, "cannot create %s", path);
    return file;
}

static char* read_file(const char* path, size_t* length) {
    FILE* file = fopen(path, "rb");
    CHECK(file != NULL, "cannot open %s", path);
    CHECK(fseek(file, 0, SEEK_END) == 0, "cannot seek %s", path);
    long size = ftell(file);
    CHECK(size >= 0, "cannot size %s", path);
    CHECK(fseek(file, 0, SEEK_SET) == 0, "cannot seek %s", path);
    char* text = malloc((size_t)size + 1);
    CHECK(text != NULL, "out of memory");
    CHECK(fread(text, 1, (size_t)size, file) == (size_t)size, "cannot read %s", path);
    fclose(file);
    text[size] = '\0';
    *length = (size_t)size;
    return text;
}

static geogen_script* compile_text(const char* name, const char* text) {
    geogen_script* script = NULL;
    OK(geogen_script_compile(name, text, strlen(text), NULL, &script, E));
    return script;
}

/* The expected failure of a call: its status and code; returns the error (to free). */
static geogen_error* expect_failure(geogen_status status, geogen_error* error, geogen_status expected,
                                    const char* code, const char* what) {
    CHECK(status == expected, "%s: status %d, expected %d (%s)", what, (int)status, (int)expected,
          geogen_error_text(error));
    CHECK(error != NULL, "%s: no error object", what);
    CHECK(geogen_error_status(error) == expected, "%s: the error's status differs", what);
    CHECK(strcmp(geogen_error_code(error), code) == 0, "%s: code %s, expected %s (%s)", what,
          geogen_error_code(error), code, geogen_error_message(error));
    CHECK(strlen(geogen_error_message(error)) > 0, "%s: an empty message", what);
    CHECK(strstr(geogen_error_text(error), code) != NULL, "%s: the text does not name the code", what);
    printf("ok: %s gives %s: %s\n", what, code, geogen_error_message(error));
    return error;
}

/* What a render thread does: its own copy of the settings, the shared script. */
typedef struct {
    const geogen_script* script;
    const geogen_settings* settings;
    uint16_t* out;
    geogen_status status;
} job;

static void* render_job(void* argument) {
    job* j = argument;
    geogen_settings* own = NULL;
    j->status = geogen_settings_clone(j->settings, &own, NULL);
    if (j->status == GEOGEN_OK) {
        j->status = geogen_render_u16(j->script, own, "main", ORIGIN_X, ORIGIN_Y, SIDE, SIDE, 1.0, j->out, SIDE,
                                      NULL, NULL, NULL);
    }
    geogen_settings_free(own);
    return NULL;
}

/* The CLI's 16-bit mapping, written independently: round(h * 32767) + 32767, halves away from 0. */
static uint16_t expected_sample(float h) {
    double clamped = h != h ? 0.0 : h < -1.0f ? -1.0 : h > 1.0f ? 1.0 : (double)h;
    return (uint16_t)(lround(clamped * 32767.0) + 32767);
}

static void versions(void) {
    CHECK(geogen_api_version() == GEOGEN_API_VERSION, "the library is version %u, the header %d",
          geogen_api_version(), GEOGEN_API_VERSION);
    CHECK(strlen(geogen_version()) > 0, "an empty version");
    printf("ok: API version %u, geogen %s\n", geogen_api_version(), geogen_version());
}

static void describe_island(const geogen_script* island) {
    geogen_script_info info;
    OK(geogen_script_get_info(island, &info, E));
    CHECK(strcmp(info.name, "Island") == 0, "name %s", info.name);
    CHECK(info.width_finite == 1 && info.height_finite == 1, "the island is finite");
    CHECK(info.param_count == 2 && info.map_count == 1, "%u parameters, %u maps", info.param_count, info.map_count);
    const char* map = NULL;
    OK(geogen_script_map_name(island, 0, &map, E));
    CHECK(strcmp(map, "main") == 0, "map %s", map);
    geogen_param_info size;
    OK(geogen_script_param(island, 0, &size, E));
    CHECK(strcmp(size.name, "Size") == 0 && size.kind == GEOGEN_PARAM_NUMBER, "parameter 0 is %s", size.name);
    CHECK(size.min == 0.1 && size.max == 0.6 && size.default_value == 0.4, "Size %g..%g (%g)", size.min, size.max,
          size.default_value);
    CHECK(strcmp(size.default_text, "0.4") == 0, "Size's default reads %s", size.default_text);
    CHECK(strcmp(size.label, "Island size") == 0, "Size's label %s", size.label);
    geogen_param_info roughness;
    OK(geogen_script_param(island, 1, &roughness, E));
    CHECK(strcmp(roughness.name, "Roughness") == 0 && roughness.default_value == 0.5, "parameter 1 is %s",
          roughness.name);
    geogen_error* error = NULL;
    geogen_status status = geogen_script_param(island, 2, &size, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "parameter 2 of 2"));
    printf("ok: the island declares Size, Roughness and the map main\n");
}

static void enum_and_boolean_parameters(void) {
    geogen_script* script = compile_text(
        "params.ggs",
        "metadata { Width: Infinite, Height: Infinite, Parameters: {\n"
        "    Axis: { Type: Direction, Default: Vertical }, Raised: { Default: false } } }\n"
        "var h = 0;\n"
        "if (Parameters.Raised) { h = 0.5; }\n"
        "if (Parameters.Axis == Direction.Horizontal) { h = h - 0.25; }\n"
        "yield HeightMap.Flat(h);\n");
    geogen_param_info axis;
    OK(geogen_script_param(script, 0, &axis, E));
    CHECK(axis.kind == GEOGEN_PARAM_ENUM && axis.item_count == 2, "Axis is an enum of 2");
    CHECK(strcmp(axis.default_text, "Vertical") == 0 && axis.default_value == 1.0, "Axis defaults to %s",
          axis.default_text);
    const char* item = NULL;
    double value = -1;
    OK(geogen_script_param_item(script, 0, 0, &item, &value, E));
    CHECK(strcmp(item, "Horizontal") == 0 && value == 0.0, "item 0 is %s = %g", item, value);
    geogen_param_info raised;
    OK(geogen_script_param(script, 1, &raised, E));
    CHECK(raised.kind == GEOGEN_PARAM_BOOLEAN && strcmp(raised.default_text, "false") == 0, "Raised");

    geogen_settings* settings = NULL;
    OK(geogen_settings_new(&settings, E));
    float h = 9;
    OK(geogen_render_float(script, settings, "main", 0, 0, 1, 1, 1.0, &h, 1, NULL, NULL, E));
    CHECK(h == 0.0f, "the defaults give %g", h);
    OK(geogen_settings_set_param_number(settings, "Raised", 1, E));
    OK(geogen_settings_set_param(settings, "Axis", "Horizontal", E));
    OK(geogen_script_check_settings(script, settings, E));
    OK(geogen_render_float(script, settings, "main", 0, 0, 1, 1, 1.0, &h, 1, NULL, NULL, E));
    CHECK(h == 0.25f, "Raised and Horizontal give %g", h);
    OK(geogen_settings_set_param_number(settings, "Axis", 1, E));
    OK(geogen_render_float(script, settings, "main", 0, 0, 1, 1, 1.0, &h, 1, NULL, NULL, E));
    CHECK(h == 0.5f, "Axis by number gives %g", h);
    OK(geogen_settings_clear_params(settings, E));
    OK(geogen_render_float(script, settings, "main", 0, 0, 1, 1, 1.0, &h, 1, NULL, NULL, E));
    CHECK(h == 0.0f, "cleared parameters give %g", h);

    geogen_error* error = NULL;
    OK(geogen_settings_set_param(settings, "Axes", "1", E));
    geogen_status status = geogen_script_check_settings(script, settings, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4001", "an unknown parameter"));
    OK(geogen_settings_clear_params(settings, E));
    OK(geogen_settings_set_param(settings, "Raised", "perhaps", E));
    status = geogen_render_float(script, settings, "main", 0, 0, 1, 1, 1.0, &h, 1, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4002", "a bad boolean"));
    geogen_settings_free(settings);
    geogen_script_free(script);
}

/* The island, whole, in halves and from four threads: the same samples every time. */
static void island(const char* path, const char* out) {
    size_t length = 0;
    char* text = read_file(path, &length);
    geogen_compile_options* options = NULL;
    OK(geogen_compile_options_new(&options, E));
    OK(geogen_compile_options_set_limit(options, GEOGEN_LIMIT_MEMORY_BYTES, (uint64_t)512 << 20, E));
    geogen_script* island = NULL;
    OK(geogen_script_compile(path, text, length, options, &island, E));
    geogen_compile_options_free(options);
    free(text);
    describe_island(island);

    geogen_settings* settings = NULL;
    OK(geogen_settings_new(&settings, E));
    OK(geogen_settings_set_seed_text(settings, "7", E));
    OK(geogen_settings_set_map_size(settings, MAP_SIZE, MAP_SIZE, E));

    static uint16_t whole[SIDE * SIDE];
    uint16_t low = 0, high = 0;
    OK(geogen_render_u16(island, settings, "main", ORIGIN_X, ORIGIN_Y, SIDE, SIDE, 1.0, whole, SIDE, &low, &high, E));
    uint16_t seen_low = 65535, seen_high = 0;
    for (size_t i = 0; i < SIDE * SIDE; i++) {
        seen_low = whole[i] < seen_low ? whole[i] : seen_low;
        seen_high = whole[i] > seen_high ? whole[i] : seen_high;
    }
    CHECK(low == seen_low && high == seen_high, "min/max %u/%u, the samples span %u/%u", low, high, seen_low,
          seen_high);
    CHECK(low < 32767 && high > 32767, "the rectangle holds sea and land (%u..%u)", low, high);
    printf("ok: the island's %dx%d samples at %d,%d span %u..%u\n", SIDE, SIDE, ORIGIN_X, ORIGIN_Y, low, high);

    /* The same as little-endian bytes, as an r16 file holds them. */
    FILE* r16 = create(out, "r16");
    for (size_t i = 0; i < SIDE * SIDE; i++) {
        unsigned char bytes[2] = {(unsigned char)(whole[i] & 0xff), (unsigned char)(whole[i] >> 8)};
        CHECK(fwrite(bytes, 1, 2, r16) == 2, "cannot write the samples");
    }
    CHECK(fclose(r16) == 0, "cannot close the samples");

    /* Floats, in a buffer with a wider stride: quantised, the same samples; the gap untouched. */
    enum { STRIDE = SIDE + 3 };
    static float heights[STRIDE * SIDE];
    for (size_t i = 0; i < STRIDE * SIDE; i++) {
        heights[i] = 42.0f;
    }
    float fmin = 0, fmax = 0;
    OK(geogen_render_float(island, settings, "main", ORIGIN_X, ORIGIN_Y, SIDE, SIDE, 1.0, heights, STRIDE, &fmin,
                           &fmax, E));
    float seen_fmin = 2, seen_fmax = -2;
    for (size_t j = 0; j < SIDE; j++) {
        for (size_t i = 0; i < STRIDE; i++) {
            float h = heights[j * STRIDE + i];
            if (i >= SIDE) {
                CHECK(h == 42.0f, "the gap between rows was written at row %zu", j);
                continue;
            }
            CHECK(h >= -1.0f && h <= 1.0f, "height %g out of range", h);
            seen_fmin = h < seen_fmin ? h : seen_fmin;
            seen_fmax = h > seen_fmax ? h : seen_fmax;
            CHECK(expected_sample(h) == whole[j * SIDE + i], "pixel %zu,%zu: %g quantises to %u, not %u", i, j, h,
                  expected_sample(h), whole[j * SIDE + i]);
        }
    }
    CHECK(fmin == seen_fmin && fmax == seen_fmax, "float min/max %g/%g, seen %g/%g", fmin, fmax, seen_fmin,
          seen_fmax);
    printf("ok: float heights %g..%g quantise to the 16-bit samples\n", fmin, fmax);
    FILE* f32 = create(out, "f32");
    for (size_t j = 0; j < SIDE; j++) {
        write_le32(f32, heights + j * STRIDE, SIDE);
    }
    CHECK(fclose(f32) == 0, "cannot close the heights");

    /* Left and right halves into one buffer: the whole. */
    static uint16_t halves[SIDE * SIDE];
    const uint32_t left = SIDE / 2, right = SIDE - SIDE / 2;
    OK(geogen_render_u16(island, settings, "main", ORIGIN_X, ORIGIN_Y, left, SIDE, 1.0, halves, SIDE, NULL, NULL, E));
    OK(geogen_render_u16(island, settings, "main", ORIGIN_X + left, ORIGIN_Y, right, SIDE, 1.0, halves + left, SIDE,
                         NULL, NULL, E));
    CHECK(memcmp(halves, whole, sizeof whole) == 0, "the left and right halves differ from the whole");
    printf("ok: halves of %u and %u columns equal the whole\n", left, right);

    /* Four threads at once, one shared script. */
    pthread_t threads[THREADS];
    job jobs[THREADS];
    static uint16_t outputs[THREADS][SIDE * SIDE];
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (job){island, settings, outputs[t], -1};
        CHECK(pthread_create(&threads[t], NULL, render_job, &jobs[t]) == 0, "cannot start thread %d", t);
    }
    for (int t = 0; t < THREADS; t++) {
        CHECK(pthread_join(threads[t], NULL) == 0, "cannot join thread %d", t);
        CHECK(jobs[t].status == GEOGEN_OK, "thread %d: status %d", t, (int)jobs[t].status);
        CHECK(memcmp(outputs[t], whole, sizeof whole) == 0, "thread %d rendered other samples", t);
    }
    printf("ok: %d threads sharing the script rendered the same samples\n", THREADS);

    /* The rectangle of the command line's example lies left of the finite map: refused. */
    geogen_error* error = NULL;
    geogen_status status =
        geogen_render_u16(island, settings, "main", -300, 128, SIDE, SIDE, 1.0, whole, SIDE, NULL, NULL, &error);
    geogen_error_free(
        expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4003", "a rectangle outside the finite map"));
    status = geogen_render_u16(island, settings, "main", MAP_SIZE - 10, 0, 20, 20, 1.0, whole, SIDE, NULL, NULL, &error);
    geogen_error_free(
        expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4003", "a rectangle across the map's edge"));
    status = geogen_render_u16(island, settings, "coast", 0, 0, 4, 4, 1.0, whole, SIDE, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "an unknown map"));
    status = geogen_render_u16(island, settings, "main", 0, 0, 4, 4, 1.0, whole, 3, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a stride below the width"));
    status = geogen_render_u16(island, settings, "main", 0, 0, 4, 4, 20.0, whole, 4, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4003", "a scale of 20"));

    /* Limits: the settings' override, and the renderer's memory. */
    geogen_settings* tight = NULL;
    OK(geogen_settings_clone(settings, &tight, E));
    OK(geogen_settings_set_limit(tight, GEOGEN_LIMIT_INSTRUCTIONS, 10, E));
    status = geogen_render_u16(island, tight, "main", 0, 0, 4, 4, 1.0, whole, 4, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_LIMIT, "GGE2505", "10 instructions"));
    OK(geogen_settings_set_limit(tight, GEOGEN_LIMIT_INSTRUCTIONS, 100000000, E));
    OK(geogen_settings_set_limit(tight, GEOGEN_LIMIT_MEMORY_BYTES, 1024, E));
    status = geogen_render_u16(island, tight, "main", 0, 0, 64, 64, 1.0, whole, 64, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_LIMIT, "GGE3001", "1 KiB of memory"));
    status = geogen_settings_set_limit(tight, GEOGEN_LIMIT_SCRIPT_BYTES, 10, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a script size in settings"));
    status = geogen_settings_set_limit(tight, 99, 10, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "limit 99"));
    uint64_t instructions = 0;
    OK(geogen_limit_default(GEOGEN_LIMIT_INSTRUCTIONS, &instructions, E));
    CHECK(instructions == 100000000, "the default instruction limit is %llu", (unsigned long long)instructions);
    geogen_settings_free(tight);

    geogen_settings_free(settings);
    geogen_script_free(island);
}

/* An infinite map at a negative origin and at scale 0.5: halves in both directions equal the whole. */
static void infinite_halves(void) {
    geogen_script* script = compile_text("waves.ggs",
                                         "metadata { Width: Infinite, Height: Infinite }\n"
                                         "var map = HeightMap.Noise(CreateNoiseLayers(4, 64));\n"
                                         "map.Blur(3);\n"
                                         "yield map;\n");
    geogen_settings* settings = NULL;
    OK(geogen_settings_new(&settings, E));
    OK(geogen_settings_set_seed(settings, 12345, E));
    enum { W = 64, H = 48, X = -300, Y = 128 };
    const double scales[2] = {1.0, 0.5};
    for (int s = 0; s < 2; s++) {
        static float whole[W * H], parts[W * H];
        OK(geogen_render_float(script, settings, "main", X, Y, W, H, scales[s], whole, W, NULL, NULL, E));
        OK(geogen_render_float(script, settings, "main", X, Y, 31, H, scales[s], parts, W, NULL, NULL, E));
        OK(geogen_render_float(script, settings, "main", X + 31, Y, W - 31, H, scales[s], parts + 31, W, NULL, NULL, E));
        CHECK(memcmp(parts, whole, sizeof whole) == 0, "left and right differ from the whole at scale %g", scales[s]);
        OK(geogen_render_float(script, settings, "main", X, Y, W, 20, scales[s], parts, W, NULL, NULL, E));
        OK(geogen_render_float(script, settings, "main", X, Y + 20, W, H - 20, scales[s], parts + 20 * W, W, NULL, NULL,
                               E));
        CHECK(memcmp(parts, whole, sizeof whole) == 0, "top and bottom differ from the whole at scale %g", scales[s]);
        int varied = 0;
        for (size_t i = 1; i < W * H; i++) {
            varied |= whole[i] != whole[0];
        }
        CHECK(varied, "the noise is flat");
    }
    printf("ok: an infinite map at %d,%d splits into halves exactly at scales 1 and 0.5\n", X, Y);
    geogen_settings_free(settings);
    geogen_script_free(script);
}

static void height_slang(void) {
    const char* program = "(- (* 2 x) 1)";
    geogen_script* by_name = compile_text("ramp.hs", program);
    geogen_settings* settings = NULL;
    OK(geogen_settings_new(&settings, E));
    OK(geogen_settings_set_param_number(settings, "UnitSize", 4, E));
    float row[5];
    float low = 0, high = 0;
    OK(geogen_render_float(by_name, settings, "main", 0, 0, 5, 1, 1.0, row, 5, &low, &high, E));
    const float expected[5] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f};
    CHECK(memcmp(row, expected, sizeof row) == 0, "the ramp is %g %g %g %g %g", row[0], row[1], row[2], row[3], row[4]);
    CHECK(low == -1.0f && high == 1.0f, "the ramp spans %g..%g", low, high);

    geogen_compile_options* options = NULL;
    OK(geogen_compile_options_new(&options, E));
    OK(geogen_compile_options_set_language(options, GEOGEN_LANGUAGE_HEIGHT_SLANG, E));
    OK(geogen_compile_options_set_dialect(options, GEOGEN_DIALECT_PICOGEN_2008, E));
    geogen_script* chosen = NULL;
    OK(geogen_script_compile("ramp.txt", program, strlen(program), options, &chosen, E));
    OK(geogen_render_float(chosen, settings, "main", 0, 0, 5, 1, 1.0, row, 5, NULL, NULL, E));
    CHECK(memcmp(row, expected, sizeof row) == 0, "the chosen language renders another ramp");

    geogen_error* error = NULL;
    geogen_script* bad = NULL;
    const char* broken = "(+ 1\n   (sinus x))";
    geogen_status status = geogen_script_compile("bad.hs", broken, strlen(broken), NULL, &bad, &error);
    expect_failure(status, error, GEOGEN_ERROR_SCRIPT, "GGE8108", "an unknown Height-Slang variable");
    CHECK(geogen_error_line(error) == 2 && geogen_error_column(error) == 8, "the error is at %u:%u",
          geogen_error_line(error), geogen_error_column(error));
    CHECK(bad == NULL, "a failed compile returned a script");
    geogen_error_free(error);
    status = geogen_compile_options_set_language(options, 7, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "language 7"));
    printf("ok: Height-Slang by name and by choice\n");
    geogen_compile_options_free(options);
    geogen_settings_free(settings);
    geogen_script_free(chosen);
    geogen_script_free(by_name);
}

static void script_errors(void) {
    geogen_error* error = NULL;
    geogen_script* script = NULL;
    const char* syntax = "metadata { Width: Finite, Height: Finite }\nvar x = ;\nvar y = ;\nyield HeightMap.Flat(0);\n";
    geogen_status status = geogen_script_compile("syntax.ggs", syntax, strlen(syntax), NULL, &script, &error);
    expect_failure(status, error, GEOGEN_ERROR_SCRIPT, "GGE1201", "a syntax error");
    CHECK(geogen_error_line(error) == 2 && geogen_error_column(error) == 8, "the syntax error is at %u:%u",
          geogen_error_line(error), geogen_error_column(error));
    CHECK(geogen_error_count(error) == 2, "%u errors reported, 2 made", geogen_error_count(error));
    CHECK(strstr(geogen_error_text(error), "syntax.ggs:3:8") != NULL, "the text lists both:\n%s",
          geogen_error_text(error));
    CHECK(script == NULL, "a failed compile returned a script");
    geogen_error_free(error);

    /* Compiles, then fails as it runs. */
    script = compile_text("runtime.ggs", "var a = 1;\nvar b = a + missing;\nyield HeightMap.Flat(0);\n");
    geogen_settings* settings = NULL;
    OK(geogen_settings_new(&settings, E));
    float h = 0;
    status = geogen_render_float(script, settings, "main", 0, 0, 1, 1, 1.0, &h, 1, NULL, NULL, &error);
    expect_failure(status, error, GEOGEN_ERROR_SCRIPT, "GGE2202", "an undefined variable");
    CHECK(geogen_error_line(error) == 2, "the runtime error is on line %u", geogen_error_line(error));
    geogen_error_free(error);
    /* Without an error object the status alone tells. */
    status = geogen_render_float(script, settings, "main", 0, 0, 1, 1, 1.0, &h, 1, NULL, NULL, NULL);
    CHECK(status == GEOGEN_ERROR_SCRIPT, "without an error object: status %d", (int)status);
    geogen_settings_free(settings);
    geogen_script_free(script);

    /* Larger than the script size limit. */
    geogen_compile_options* options = NULL;
    OK(geogen_compile_options_new(&options, E));
    OK(geogen_compile_options_set_limit(options, GEOGEN_LIMIT_SCRIPT_BYTES, 10, E));
    const char* text = "yield HeightMap.Flat(0);";
    status = geogen_script_compile("big.ggs", text, strlen(text), options, &script, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_LIMIT, "GGE1107", "a script over the size limit"));
    geogen_compile_options_free(options);

    /* Not UTF-8. */
    const char bad_bytes[] = "yield \xff;";
    status = geogen_script_compile("bytes.ggs", bad_bytes, sizeof bad_bytes - 1, NULL, &script, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_SCRIPT, "GGE1106", "a script that is not UTF-8"));
}

static void null_arguments(void) {
    geogen_error* error = NULL;
    geogen_script* script = NULL;
    uint16_t sample = 0;
    const char* text = "yield HeightMap.Flat(0);";
    geogen_status status = geogen_script_compile(NULL, text, strlen(text), NULL, &script, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a NULL script name"));
    status = geogen_script_compile("a.ggs", NULL, 0, NULL, &script, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a NULL source"));
    status = geogen_script_compile("a.ggs", text, strlen(text), NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a NULL result place"));
    status = geogen_render_u16(NULL, NULL, "main", 0, 0, 1, 1, 1.0, &sample, 1, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a NULL script"));
    CHECK(strstr(geogen_error_message(NULL), "") != NULL && geogen_error_line(NULL) == 0, "accessors of NULL");

    script = compile_text("flat.ggs", text);
    geogen_settings* settings = NULL;
    OK(geogen_settings_new(&settings, E));
    status = geogen_render_u16(script, NULL, "main", 0, 0, 1, 1, 1.0, &sample, 1, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "NULL settings"));
    status = geogen_render_u16(script, settings, NULL, 0, 0, 1, 1, 1.0, &sample, 1, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a NULL map name"));
    status = geogen_render_u16(script, settings, "main", 0, 0, 1, 1, 1.0, NULL, 1, NULL, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a NULL buffer"));
    status = geogen_settings_set_param(settings, NULL, "1", &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a NULL parameter name"));
    status = geogen_settings_set_seed(NULL, 1, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "NULL settings to change"));
    status = geogen_script_get_info(script, NULL, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4000", "a NULL info place"));
    status = geogen_settings_set_param_number(settings, "Size", NAN, &error);
    geogen_error_free(expect_failure(status, error, GEOGEN_ERROR_INVALID_ARGUMENT, "GGE4002", "a NaN parameter"));
    OK(geogen_render_u16(script, settings, "main", 0, 0, 1, 1, 1.0, &sample, 1, NULL, NULL, E));
    CHECK(sample == 32767, "a flat 0 map is sample %u", sample);

    geogen_script_free(NULL);
    geogen_settings_free(NULL);
    geogen_compile_options_free(NULL);
    geogen_error_free(NULL);
    geogen_settings_free(settings);
    geogen_script_free(script);
    printf("ok: NULL arguments are refused and NULL objects freed\n");
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s ISLAND_SCRIPT OUT\n", argv[0]);
        return 2;
    }
    versions();
    island(argv[1], argv[2]);
    enum_and_boolean_parameters();
    infinite_halves();
    height_slang();
    script_errors();
    null_arguments();
    printf("all checks passed (%d)\n", checks);
    return 0;
}
