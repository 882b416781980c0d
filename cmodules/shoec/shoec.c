// shoec: the frozen image's C fast paths for the per-card byte work (docs/hardware.md
// section 8, "C in the frozen image"). Built into the RP2040 image only (tools/
// build_pico_firmware.sh: USER_C_MODULES); everywhere else the Python code it speeds up runs
// alone, and on the emulated Pico tests/emu/test_shoec.py keeps the two equal.
//
//   shoec.cbor(obj) -> bytes, or None
//       The canonical CBOR of shoe.link.codec for the common case: exact str, small int,
//       an int of up to 64 bits, list, tuple, dict (str and small-int keys, in the canonical
//       order: the keys' encodings bytewise), bytes, bytearray, None, True, False, nested at
//       most MAX_DEPTH deep. Anything else (a longer int, a float, a subclass, another key, too
//       deep, over MAX_KEYS keys) -> None: the caller encodes it in Python, which gives the
//       same bytes or the same error.
//   shoec.hmac_sha256(key, tag, data) -> bytes(32)
//       HMAC-SHA256(key, tag + data). The SHA-256 states after the key's inner and outer pad
//       blocks are kept for the last 4 keys (by content), so a MAC costs two compressions fewer.
//   shoec.ctr(key, direction, ftype, seq, data) -> bytes
//       shoe.link.cipher.Ctr.crypt: data XOR the AES-128 keystream of counter blocks
//       direction:1 type:1 seq:2 zero:10 i:2 (the key schedule kept for the last 2 keys).
//   shoec.seal(key, tag, items, head) -> (payload, head hash or None), or None
//       shoe.link.message.seal: the canonical CBOR core of the list `items` (fewer than 23),
//       HMAC-SHA256(key, tag + core)[:16], SHA-256(core)[:16] if `head`, and the payload (the
//       core's array head counting one item more, then the MAC as a 16-byte bstr) in one call.
//       None where shoec.cbor says None (another type, too deep, ...) or items is no list of
//       fewer than 23: the Python seal gives the same bytes or the same error.
//   shoec.frame(version, ftype, seq, ack, payload, key, tag) -> bytes, or None
//       shoe.link.frame.build_into's wire bytes: COBS(header, payload, the 8-byte MAC
//       HMAC-SHA256(key, tag + header + payload)[:8] (zeros without a key), CRC-32) + 0x00.
//       None for a payload over MAX_PAYLOAD (Python raises).

#include <string.h>

#include "py/runtime.h"
#include "py/objstr.h"
#include "py/objlist.h"
#include "py/objtuple.h"
#include "py/objint.h"
#include "py/mpz.h"
#include "mbedtls/sha256.h"
#include "mbedtls/aes.h"
#include "lib/uzlib/uzlib.h"  // uzlib_crc32: what binascii.crc32 (shoe.link.crc) calls

#if !(MICROPY_PY_BINASCII_CRC32 && MICROPY_PY_DEFLATE)
#error "shoec needs the port's binascii.crc32 (uzlib)"
#endif

#define MAX_DEPTH (12)      // shoe.link.codec.MAX_DEPTH
#define MAX_KEYS (64)       // a dict with more keys is encoded in Python (n^2 below)
#define SMALL (8)           // a dict with at most this many keys is sorted on the C stack

typedef struct {
    vstr_t *out;
    bool ok;
} enc_t;

static void head(vstr_t *out, unsigned major, uint64_t n) {
    byte m = major << 5;
    if (n < 24) {
        vstr_add_byte(out, m | n);
    } else if (n < 0x100) {
        vstr_add_byte(out, m | 24);
        vstr_add_byte(out, n);
    } else if (n < 0x10000) {
        vstr_add_byte(out, m | 25);
        vstr_add_byte(out, n >> 8);
        vstr_add_byte(out, n & 0xFF);
    } else {
        int bytes = n < 0x100000000ULL ? 4 : 8;
        vstr_add_byte(out, m | (bytes == 4 ? 26 : 27));
        for (int i = bytes - 1; i >= 0; i--) {
            vstr_add_byte(out, (n >> (8 * i)) & 0xFF);
        }
    }
}

// An int that is not small (the RTC's seconds since 1970 are past 2**30): its CBOR head when
// its magnitude is at most 4 mpz digits of 16 bits (< 2**64); false for anything else.
static bool big_int(vstr_t *out, mp_obj_t obj) {
    #if MICROPY_LONGINT_IMPL == MICROPY_LONGINT_IMPL_MPZ && MPZ_DIG_SIZE == 16
    if (!mp_obj_is_exact_type(obj, &mp_type_int)) {
        return false;
    }
    const mpz_t *z = &((mp_obj_int_t *)MP_OBJ_TO_PTR(obj))->mpz;
    if (z->len == 0 || z->len > 4) {
        return false;
    }
    uint64_t mag = 0;
    for (size_t i = z->len; i-- > 0;) {
        mag = (mag << 16) | z->dig[i];
    }
    if (z->neg) {
        head(out, 1, mag - 1);
    } else {
        head(out, 0, mag);
    }
    return true;
    #else
    (void)out;
    (void)obj;
    return false;
    #endif
}

// The canonical order of two keys (small ints or exact strs): the bytewise order of their
// encodings, which is unsigned ints by value, then negative ints by -1-k, then strs by (UTF-8
// length, UTF-8 bytes): a head is the major type and then the length, big-endian.
static int key_class(mp_obj_t k) {
    return mp_obj_is_small_int(k) ? (MP_OBJ_SMALL_INT_VALUE(k) >= 0 ? 0 : 1) : 2;
}

static int key_cmp(mp_obj_t a, mp_obj_t b) {
    int ca = key_class(a), cb = key_class(b);
    if (ca != cb) {
        return ca < cb ? -1 : 1;
    }
    if (ca == 0) {
        mp_int_t x = MP_OBJ_SMALL_INT_VALUE(a), y = MP_OBJ_SMALL_INT_VALUE(b);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (ca == 1) {  // -1-x ascending: x descending
        mp_int_t x = MP_OBJ_SMALL_INT_VALUE(a), y = MP_OBJ_SMALL_INT_VALUE(b);
        return x > y ? -1 : x < y ? 1 : 0;
    }
    size_t na, nb;
    const char *sa = mp_obj_str_get_data(a, &na);
    const char *sb = mp_obj_str_get_data(b, &nb);
    if (na != nb) {
        return na < nb ? -1 : 1;
    }
    return memcmp(sa, sb, na);
}

static void enc(enc_t *e, mp_obj_t obj, int depth);

static void enc_dict(enc_t *e, mp_obj_t obj, int depth) {
    mp_map_t *map = &((mp_obj_dict_t *)MP_OBJ_TO_PTR(obj))->map;
    size_t n = map->used;
    if ((n && depth >= MAX_DEPTH) || n > MAX_KEYS) {
        e->ok = false;
        return;
    }
    head(e->out, 5, n);
    // The keys in canonical order (keys are distinct). Up to SMALL keys (an event's dicts):
    // sorted by insertion in two arrays on the C stack. More (a status reply): by selection,
    // each round emitting the least key above the last one emitted, O(n^2) comparisons with
    // nothing kept but a few words. Either way a level takes little of the C stack (8 KB on
    // the RP2040): dicts nest MAX_DEPTH deep.
    mp_obj_t ks[SMALL], vs[SMALL];
    size_t m = 0;
    for (size_t i = 0; i < map->alloc; i++) {
        if (!mp_map_slot_is_filled(map, i)) {
            continue;
        }
        mp_obj_t k = map->table[i].key;
        if (!mp_obj_is_small_int(k) && !mp_obj_is_str(k)) {
            e->ok = false;
            return;
        }
        if (n <= SMALL) {
            size_t j = m++;
            while (j > 0 && key_cmp(ks[j - 1], k) > 0) {
                ks[j] = ks[j - 1];
                vs[j] = vs[j - 1];
                j--;
            }
            ks[j] = k;
            vs[j] = map->table[i].value;
        }
    }
    if (n <= SMALL) {
        for (size_t i = 0; i < n && e->ok; i++) {
            enc(e, ks[i], 0);
            enc(e, vs[i], depth + 1);
        }
        return;
    }
    mp_obj_t last = MP_OBJ_NULL;
    for (size_t done = 0; done < n && e->ok; done++) {
        mp_obj_t best = MP_OBJ_NULL, value = MP_OBJ_NULL;
        for (size_t i = 0; i < map->alloc; i++) {
            if (!mp_map_slot_is_filled(map, i)) {
                continue;
            }
            mp_obj_t k = map->table[i].key;
            if (last != MP_OBJ_NULL && key_cmp(k, last) <= 0) {
                continue;
            }
            if (best == MP_OBJ_NULL || key_cmp(k, best) < 0) {
                best = k;
                value = map->table[i].value;
            }
        }
        enc(e, best, 0);
        last = best;
        enc(e, value, depth + 1);
    }
}

static void enc(enc_t *e, mp_obj_t obj, int depth) {
    if (!e->ok) {
        return;
    }
    if (mp_obj_is_small_int(obj)) {
        mp_int_t x = MP_OBJ_SMALL_INT_VALUE(obj);
        if (x >= 0) {
            head(e->out, 0, x);
        } else {
            head(e->out, 1, -1 - x);
        }
    } else if (mp_obj_is_str(obj)) {
        size_t n;
        const char *s = mp_obj_str_get_data(obj, &n);
        head(e->out, 3, n);
        vstr_add_strn(e->out, s, n);
    } else if (obj == mp_const_none) {
        vstr_add_byte(e->out, 0xF6);
    } else if (obj == mp_const_true) {
        vstr_add_byte(e->out, 0xF5);
    } else if (obj == mp_const_false) {
        vstr_add_byte(e->out, 0xF4);
    } else if (mp_obj_is_exact_type(obj, &mp_type_list) || mp_obj_is_exact_type(obj, &mp_type_tuple)) {
        size_t n;
        mp_obj_t *items;
        mp_obj_get_array(obj, &n, &items);
        if (n && depth >= MAX_DEPTH) {
            e->ok = false;
            return;
        }
        head(e->out, 4, n);
        for (size_t i = 0; i < n && e->ok; i++) {
            enc(e, items[i], depth + 1);
        }
    } else if (mp_obj_is_exact_type(obj, &mp_type_dict)) {
        enc_dict(e, obj, depth);
    } else if (mp_obj_is_exact_type(obj, &mp_type_bytes) || mp_obj_is_exact_type(obj, &mp_type_bytearray)) {
        mp_buffer_info_t b;
        mp_get_buffer_raise(obj, &b, MP_BUFFER_READ);
        head(e->out, 2, b.len);
        vstr_add_strn(e->out, b.buf, b.len);
    } else if (!big_int(e->out, obj)) {
        e->ok = false;  // a float, a memoryview, a subclass, a set, ...: Python's to do
    }
}

// The encoding of obj into a new `out` -> true, or false (out freed): the Python encoder's to do.
static bool encode_new(vstr_t *out, mp_obj_t obj) {
    vstr_init(out, 128);
    enc_t e = {out, true};
    enc(&e, obj, 0);
    if (!e.ok) {
        vstr_clear(out);
    }
    return e.ok;
}

static mp_obj_t shoec_cbor(mp_obj_t obj) {
    vstr_t out;
    if (!encode_new(&out, obj)) {
        return mp_const_none;
    }
    return mp_obj_new_bytes_from_vstr(&out);
}
static MP_DEFINE_CONST_FUN_OBJ_1(shoec_cbor_obj, shoec_cbor);

// ---- HMAC-SHA256 with the pads' states kept -------------------------------------------------
#define KEYS (4)
typedef struct {
    byte key[64];
    size_t len;
    bool used;
    mbedtls_sha256_context inner, outer;
} pads_t;

static pads_t pads[KEYS];
static unsigned next_slot;

// The SHA-256 states after the inner and outer pad blocks of a key of at most 64 bytes.
static pads_t *pads_of(const byte *key, size_t len) {
    for (unsigned i = 0; i < KEYS; i++) {
        if (pads[i].used && pads[i].len == len && memcmp(pads[i].key, key, len) == 0) {
            return &pads[i];
        }
    }
    pads_t *p = &pads[next_slot];
    next_slot = (next_slot + 1) % KEYS;
    byte ipad[64], opad[64];
    for (unsigned i = 0; i < 64; i++) {
        byte k = i < len ? key[i] : 0;
        ipad[i] = k ^ 0x36;
        opad[i] = k ^ 0x5C;
    }
    mbedtls_sha256_init(&p->inner);
    mbedtls_sha256_starts(&p->inner, 0);
    mbedtls_sha256_update(&p->inner, ipad, 64);
    mbedtls_sha256_init(&p->outer);
    mbedtls_sha256_starts(&p->outer, 0);
    mbedtls_sha256_update(&p->outer, opad, 64);
    memcpy(p->key, key, len);
    p->len = len;
    p->used = true;
    return p;
}

static void hmac(const byte *k, size_t kn, const byte *t, size_t tn, const byte *d, size_t dn,
    byte *mac) {
    byte kh[32];
    mbedtls_sha256_context c;
    mbedtls_sha256_init(&c);
    if (kn > 64) {  // RFC 2104: a long key is hashed first
        mbedtls_sha256_starts(&c, 0);
        mbedtls_sha256_update(&c, k, kn);
        mbedtls_sha256_finish(&c, kh);
        k = kh;
        kn = 32;
    }
    pads_t *p = pads_of(k, kn);
    byte inner[32];
    mbedtls_sha256_clone(&c, &p->inner);
    mbedtls_sha256_update(&c, t, tn);
    mbedtls_sha256_update(&c, d, dn);
    mbedtls_sha256_finish(&c, inner);
    mbedtls_sha256_clone(&c, &p->outer);
    mbedtls_sha256_update(&c, inner, 32);
    mbedtls_sha256_finish(&c, mac);
    mbedtls_sha256_free(&c);
}

static mp_obj_t shoec_hmac_sha256(mp_obj_t key_in, mp_obj_t tag_in, mp_obj_t data_in) {
    mp_buffer_info_t key, tag, data;
    mp_get_buffer_raise(key_in, &key, MP_BUFFER_READ);
    mp_get_buffer_raise(tag_in, &tag, MP_BUFFER_READ);
    mp_get_buffer_raise(data_in, &data, MP_BUFFER_READ);
    vstr_t out;
    vstr_init_len(&out, 32);
    hmac(key.buf, key.len, tag.buf, tag.len, data.buf, data.len, (byte *)out.buf);
    return mp_obj_new_bytes_from_vstr(&out);
}
static MP_DEFINE_CONST_FUN_OBJ_3(shoec_hmac_sha256_obj, shoec_hmac_sha256);

// ---- a message's envelope (shoe/link/message.py: seal) -------------------------------------
#define MAC_LEN (16)

static mp_obj_t shoec_seal(size_t n_args, const mp_obj_t *args) {
    mp_buffer_info_t key, tag;
    mp_get_buffer_raise(args[0], &key, MP_BUFFER_READ);
    mp_get_buffer_raise(args[1], &tag, MP_BUFFER_READ);
    mp_obj_t items = args[2];
    if (!mp_obj_is_exact_type(items, &mp_type_list)) {
        return mp_const_none;
    }
    size_t n;
    mp_obj_t *ignored;
    mp_obj_get_array(items, &n, &ignored);
    if (n >= 23) {  // the array head must stay one byte when it counts the MAC too
        return mp_const_none;
    }
    vstr_t out;
    if (!encode_new(&out, items)) {
        return mp_const_none;
    }
    size_t len = out.len;
    byte mac[32];
    hmac(key.buf, key.len, tag.buf, tag.len, (const byte *)out.buf, len, mac);
    mp_obj_t h = mp_const_none;
    if (mp_obj_is_true(args[3])) {
        byte d[32];
        mbedtls_sha256_context c;
        mbedtls_sha256_init(&c);
        mbedtls_sha256_starts(&c, 0);
        mbedtls_sha256_update(&c, (const byte *)out.buf, len);
        mbedtls_sha256_finish(&c, d);
        mbedtls_sha256_free(&c);
        h = mp_obj_new_bytes(d, MAC_LEN);
    }
    out.buf[0] += 1;  // n items -> n + 1
    vstr_add_byte(&out, 0x50);  // bstr of 16
    vstr_add_strn(&out, (const char *)mac, MAC_LEN);
    mp_obj_t r[2] = {mp_obj_new_bytes_from_vstr(&out), h};
    return mp_obj_new_tuple(2, r);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(shoec_seal_obj, 4, 4, shoec_seal);

// ---- AES-128 in counter mode (shoe/link/cipher.py) -----------------------------------------
#define AES_KEYS (2)
typedef struct {
    byte key[16];
    bool used;
    mbedtls_aes_context aes;
} aes_slot_t;

static aes_slot_t aes_slots[AES_KEYS];
static unsigned aes_next;

static mp_obj_t shoec_ctr(size_t n_args, const mp_obj_t *args) {
    mp_buffer_info_t key, data;
    mp_get_buffer_raise(args[0], &key, MP_BUFFER_READ);
    mp_get_buffer_raise(args[4], &data, MP_BUFFER_READ);
    if (key.len != 16) {
        mp_raise_ValueError(MP_ERROR_TEXT("key"));
    }
    mp_int_t dir = mp_obj_get_int(args[1]), ftype = mp_obj_get_int(args[2]);
    mp_int_t seq = mp_obj_get_int(args[3]);
    if (data.len == 0) {
        return mp_const_empty_bytes;
    }
    aes_slot_t *a = NULL;
    for (unsigned i = 0; i < AES_KEYS; i++) {
        if (aes_slots[i].used && memcmp(aes_slots[i].key, key.buf, 16) == 0) {
            a = &aes_slots[i];
            break;
        }
    }
    if (a == NULL) {
        a = &aes_slots[aes_next];
        aes_next = (aes_next + 1) % AES_KEYS;
        a->used = false;
        mbedtls_aes_init(&a->aes);
        if (mbedtls_aes_setkey_enc(&a->aes, key.buf, 128) != 0) {
            mp_raise_ValueError(MP_ERROR_TEXT("key"));
        }
        memcpy(a->key, key.buf, 16);
        a->used = true;
    }
    vstr_t out;
    vstr_init_len(&out, data.len);
    const byte *in = data.buf;
    byte *o = (byte *)out.buf;
    byte block[16], ks[16];
    memset(block, 0, 16);
    block[0] = dir;
    block[1] = ftype;
    block[2] = (seq >> 8) & 0xFF;
    block[3] = seq & 0xFF;
    for (size_t off = 0, i = 0; off < data.len; off += 16, i++) {
        block[14] = (i >> 8) & 0xFF;
        block[15] = i & 0xFF;
        mbedtls_aes_crypt_ecb(&a->aes, MBEDTLS_AES_ENCRYPT, block, ks);
        size_t m = data.len - off < 16 ? data.len - off : 16;
        for (size_t j = 0; j < m; j++) {
            o[off + j] = in[off + j] ^ ks[j];
        }
    }
    return mp_obj_new_bytes_from_vstr(&out);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(shoec_ctr_obj, 5, 5, shoec_ctr);

// ---- frames (shoe/link/frame.py) ------------------------------------------------------------
#define F_HEADER (6)
#define F_MAC (8)
#define F_MAX_PAYLOAD (1006)
#define F_MAX_FRAME (1024)

static byte raw[F_MAX_FRAME];  // one frame at a time (the link's task; never an interrupt)

static mp_obj_t shoec_frame(size_t n_args, const mp_obj_t *args) {
    mp_buffer_info_t payload, tag;
    mp_get_buffer_raise(args[4], &payload, MP_BUFFER_READ);
    mp_get_buffer_raise(args[6], &tag, MP_BUFFER_READ);
    if (payload.len > F_MAX_PAYLOAD) {
        return mp_const_none;
    }
    mp_int_t seq = mp_obj_get_int(args[2]), ack = mp_obj_get_int(args[3]);
    raw[0] = mp_obj_get_int(args[0]);
    raw[1] = mp_obj_get_int(args[1]);
    raw[2] = (seq >> 8) & 0xFF;
    raw[3] = seq & 0xFF;
    raw[4] = (ack >> 8) & 0xFF;
    raw[5] = ack & 0xFF;
    memcpy(raw + F_HEADER, payload.buf, payload.len);
    size_t m = F_HEADER + payload.len;
    mp_buffer_info_t key = {0};
    if (args[5] != mp_const_none) {
        mp_get_buffer_raise(args[5], &key, MP_BUFFER_READ);
    }
    if (key.len) {
        byte mac[32];
        hmac(key.buf, key.len, tag.buf, tag.len, raw, m, mac);
        memcpy(raw + m, mac, F_MAC);
    } else {
        memset(raw + m, 0, F_MAC);
    }
    m += F_MAC;
    uint32_t crc = uzlib_crc32(raw, m, 0xFFFFFFFF) ^ 0xFFFFFFFF;  // binascii.crc32's own
    raw[m] = crc >> 24;
    raw[m + 1] = (crc >> 16) & 0xFF;
    raw[m + 2] = (crc >> 8) & 0xFF;
    raw[m + 3] = crc & 0xFF;
    m += 4;
    // COBS as shoe.link.cobs.encode_into: runs of 254 non-zero bytes as 0xFF blocks, each zero
    // (and the end) closing a block whose code is its length + 1; then the 0x00 delimiter
    vstr_t out;
    vstr_init(&out, m + m / 254 + 3);
    size_t i = 0;
    for (;;) {
        size_t end = i;
        while (end < m && raw[end]) {
            end++;
        }
        while (end - i >= 254) {
            vstr_add_byte(&out, 0xFF);
            vstr_add_strn(&out, (const char *)raw + i, 254);
            i += 254;
        }
        vstr_add_byte(&out, end - i + 1);
        vstr_add_strn(&out, (const char *)raw + i, end - i);
        if (end == m) {
            break;
        }
        i = end + 1;
    }
    vstr_add_byte(&out, 0);
    return mp_obj_new_bytes_from_vstr(&out);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(shoec_frame_obj, 7, 7, shoec_frame);

static const mp_rom_map_elem_t shoec_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_shoec) },
    { MP_ROM_QSTR(MP_QSTR_cbor), MP_ROM_PTR(&shoec_cbor_obj) },
    { MP_ROM_QSTR(MP_QSTR_hmac_sha256), MP_ROM_PTR(&shoec_hmac_sha256_obj) },
    { MP_ROM_QSTR(MP_QSTR_ctr), MP_ROM_PTR(&shoec_ctr_obj) },
    { MP_ROM_QSTR(MP_QSTR_frame), MP_ROM_PTR(&shoec_frame_obj) },
    { MP_ROM_QSTR(MP_QSTR_seal), MP_ROM_PTR(&shoec_seal_obj) },
};
static MP_DEFINE_CONST_DICT(shoec_globals, shoec_globals_table);

const mp_obj_module_t shoec_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&shoec_globals,
};

MP_REGISTER_MODULE(MP_QSTR_shoec, shoec_module);
