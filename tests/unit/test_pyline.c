/*
 * Python sites called directly: the location table's every form (short,
 * one-line, no-column, long with multi-byte varints, no location), the
 * site table's naming from objects laid out as CPython lays out str and
 * bytes (ASCII, Latin-1, UCS-2 and UCS-4 names, lone surrogates and NULs
 * escaped as the report writes text), one id per where (code, offset
 * and the fields that tell a reused code address), a new name for a reused
 * code address, the recent sites' table answering as the big one does,
 * two threads racing on the same sites, and a full table.  No interpreter is needed:
 * pyline.c only reads the objects a frame walk hands it.
 */
#include "config.h"

#include <pthread.h>
#include <stdalign.h>
#include <string.h>

#include "runtime/python/pyline.h"
#include "../tap.h"

#define RACED 2000

/* Stand-ins for &PyUnicode_Type and &PyBytes_Type: only their addresses
 * are compared. */
static char unicode_type, bytes_type;

static const struct cmg__py_objects objects = {
  .unicode_type = (uintptr_t)&unicode_type,
  .bytes_type = (uintptr_t)&bytes_type,
  .ascii_size = 40, .compact_size = 56, .compact_utf8 = 48,
  .compact_utf8_length = 40,
};

/* A location table of firstlineno 10, entry by entry:
 *   units 0-1  short form 0 (one column byte): line 10
 *   unit  2    one-line form 11 (two column bytes): line 11
 *   units 3-5  no-column form 13, delta -3 (svarint 7): line 8
 *   unit  6    long form 14, delta +100 (svarint 200 = 0x48 0x03), end
 *              line 0, columns 5 and 9: line 108
 *   units 7-8  form 15, no location
 *   unit  9    short form 0: line 108 again (15 changed nothing) */
static const unsigned char table[] = {
  0x81, 0x00,
  0xd8, 0x01, 0x02,
  0xea, 0x07,
  0xf0, 0x48, 0x03, 0x00, 0x05, 0x09,
  0xf9,
  0x80, 0x00,
};

static void
test_lines(void)
{
  static const int want[] = { 10, 10, 11, 8, 8, 8, 108, 0, 0, 108, 0 };
  for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    is_int(cmg__py_line(table, sizeof(table), 10, i), want[i],
           "line of instruction %u", i);
  is_int(cmg__py_line(table, 5, 10, 3), 0, "a table cut short: no line");
  static const unsigned char bad[] = { 0x01, 0x81 };
  is_int(cmg__py_line(bad, sizeof(bad), 10, 0), 0,
         "an entry without its start bit: no line");
}

struct fake_str {
  alignas(8) unsigned char b[128];
};

/* A compact str of `kind` bytes per character; ASCII when kind is 0. */
static uintptr_t
make_str(struct fake_str *s, unsigned kind, const void *data, size_t len)
{
  memset(s, 0, sizeof(*s));
  *(uintptr_t *)(s->b + 8) = (uintptr_t)&unicode_type;
  *(int64_t *)(s->b + 16) = (int64_t)len;
  uint32_t state = 1u << 5 | (kind == 0 ? 1u << 6 | 1u << 2 : kind << 2);
  *(uint32_t *)(s->b + 32) = state;
  size_t at = kind == 0 ? objects.ascii_size : objects.compact_size;
  memcpy(s->b + at, data, len * (kind ? kind : 1));
  return (uintptr_t)s->b;
}

static uintptr_t
make_table(struct fake_str *s)
{
  memset(s, 0, sizeof(*s));
  *(uintptr_t *)(s->b + 8) = (uintptr_t)&bytes_type;
  *(int64_t *)(s->b + 16) = sizeof(table);
  memcpy(s->b + 32, table, sizeof(table));
  return (uintptr_t)s->b;
}

static struct fake_str qualname, filename, linetable, other;

static struct cmg__py_where
where(uintptr_t code, uint32_t lasti, uint64_t tag)
{
  return (struct cmg__py_where){
    .code = code, .lasti = lasti, .tag = { tag },
    .qualname = (uintptr_t)qualname.b, .filename = (uintptr_t)filename.b,
    .linetable = (uintptr_t)linetable.b, .firstlineno = 10,
  };
}

static void
test_sites(void)
{
  struct cmg__py_site_view v;
  make_str(&qualname, 0, "Model.build", 11);
  make_str(&filename, 0, "/x/train.py", 11);
  make_table(&linetable);

  struct cmg__py_where w = where(0x7000, 6, 42);
  uint32_t id = cmg__py_site(&objects, &w);
  is_int(id, 1, "the first site is 1");
  ok(cmg__py_site_get(id, &v), "and can be read back");
  is_str(v.function, "Model.build", "its qualified name");
  is_str(v.file, "/x/train.py", "its file");
  is_int(v.line, 108, "its line, from the location table");

  /* Named once: a later capture of the same site reads nothing. */
  make_str(&qualname, 0, "Other.name", 10);
  is_int(cmg__py_site(&objects, &w), 1, "the same site keeps its id");
  ok(cmg__py_site_get(1, &v) && strcmp(v.function, "Model.build") == 0,
     "and its name");

  w = where(0x7000, 6, 43);
  is_int(cmg__py_site(&objects, &w), 2,
         "a reused code address (another tag) is a new site");
  ok(cmg__py_site_get(2, &v) && strcmp(v.function, "Other.name") == 0,
     "named from the new code object");

  w = where(0x7000, 3, 42);
  is_int(cmg__py_site(&objects, &w), 3, "another offset, another site");
  ok(cmg__py_site_get(3, &v) && v.line == 8, "with its own line");
  ok(!cmg__py_site_get(0, &v) && !cmg__py_site_get(4, &v),
     "ids 0 and past the last are unknown");
}

static void
test_names(void)
{
  struct cmg__py_site_view v;
  struct cmg__py_where w = where(0x8000, 0, 1);
  make_str(&qualname, 1, "caf\xe9", 4);
  make_str(&filename, 2, (const uint16_t[]){ 0x3c0, '.', 'p', 'y' }, 4);
  uint32_t id = cmg__py_site(&objects, &w);
  ok(cmg__py_site_get(id, &v), "a site with non-ASCII names");
  is_str(v.function, "caf\xc3\xa9", "a Latin-1 name as UTF-8");
  is_str(v.file, "\xcf\x80.py", "a UCS-2 name as UTF-8");

  w = where(0x8800, 0, 1);
  make_str(&qualname, 2, (const uint16_t[]){ 'b', 'a', 'd', 0xdcff }, 4);
  make_str(&filename, 4, (const uint32_t[]){ 'm', 0xdcff, 0x1f600 }, 3);
  id = cmg__py_site(&objects, &w);
  ok(cmg__py_site_get(id, &v), "a site with lone surrogates");
  is_str(v.function, "bad\\xed\\xb3\\xbf",
         "a UCS-2 surrogate as its UTF-8 bytes, escaped");
  is_str(v.file, "m\\xed\\xb3\\xbf\xf0\x9f\x98\x80",
         "a UCS-4 surrogate too, beside a character kept");

  w = where(0x8900, 0, 1);
  make_str(&qualname, 0, "a\0b", 3);
  make_str(&filename, 1, "x\0\xff", 3);
  id = cmg__py_site(&objects, &w);
  ok(cmg__py_site_get(id, &v), "a site with NULs in its names");
  is_str(v.function, "a\\x00b", "an ASCII name goes on past its NUL");
  is_str(v.file, "x\\x00\xc3\xbf", "a Latin-1 one too");

  w = where(0x9000, 0, 1);
  w.qualname = (uintptr_t)other.b;  /* zeroed: not a str */
  id = cmg__py_site(&objects, &w);
  ok(cmg__py_site_get(id, &v) && strcmp(v.function, "?") == 0,
     "an object that is not a str is named ?");
}

/* The recent sites' table holds one site per code address and offset: a
 * where that differs from the site there in any one field is another
 * site, and the first where's site, pushed out, comes back with its id. */
static void
test_recent(void)
{
  make_str(&qualname, 0, "recent", 6);
  struct cmg__py_where w0 = where(0xa000, 4, 7), w[8];
  uint32_t id0 = cmg__py_site(&objects, &w0);
  for (int i = 0; i < 8; i++)
    w[i] = w0;
  w[0].qualname += 8;
  w[1].filename += 8;
  w[2].linetable += 8;
  w[3].firstlineno++;
  w[4].units++;
  w[5].table_len++;
  w[6].tag[0]++;
  w[7].tag[1]++;
  bool distinct = true, back = true;
  uint32_t ids[8];
  for (int i = 0; i < 8; i++) {
    ids[i] = cmg__py_site(&objects, &w[i]);
    distinct = distinct && ids[i] != id0 && ids[i] != CMG__PY_NO_ROOM;
    for (int j = 0; j < i; j++)
      distinct = distinct && ids[i] != ids[j];
    back = back && cmg__py_site(&objects, &w0) == id0 &&
           cmg__py_site(&objects, &w[i]) == ids[i];
  }
  ok(distinct, "a where unlike the recent site in any one field is another");
  ok(back, "and each, met again after the other, keeps its id");

  /* More sites than the recent table has slots, twice over: most are
   * pushed out by others, and every one gets the id it first got. */
  static uint32_t first[5000];
  bool same = true;
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < 5000; i++) {
      struct cmg__py_where x = where(0x200000 + 48 * (uintptr_t)i, i % 5, 1);
      uint32_t id = cmg__py_site(&objects, &x);
      if (pass == 0)
        first[i] = id;
      same = same && id != CMG__PY_NO_ROOM && id == first[i];
    }
  ok(same, "5000 sites met twice get the same ids");
}

static uint32_t raced[2][RACED];

static void *
race(void *arg)
{
  uint32_t *out = arg;
  for (uint32_t i = 0; i < RACED; i++) {
    struct cmg__py_where w = where(0x100000 + 64 * i, i % 7, 5);
    out[i] = cmg__py_site(&objects, &w);
  }
  return NULL;
}

static void
test_threads(void)
{
  pthread_t t[2];
  make_str(&qualname, 0, "raced", 5);
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, race, raced[i]);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  bool same = true, named = true;
  for (uint32_t i = 0; i < RACED; i++) {
    struct cmg__py_site_view v;
    same = same && raced[0][i] != 0 && raced[0][i] == raced[1][i];
    named = named && cmg__py_site_get(raced[0][i], &v) &&
            strcmp(v.function, "raced") == 0;
  }
  ok(same, "two threads racing on the same sites get the same ids");
  ok(named, "and every one is named");
}

/* Past the table's 32768 sites a new one gets no id, and each time is
 * counted; the sites named stay. */
static void
test_full(void)
{
  make_str(&qualname, 0, "many", 4);
  uint32_t id = 0;
  for (uint32_t i = 0; i < 40000 && id != CMG__PY_NO_ROOM; i++) {
    struct cmg__py_where w = where(0x10000000 + 64 * (uintptr_t)i, 0, 9);
    id = cmg__py_site(&objects, &w);
  }
  is_int(id, CMG__PY_NO_ROOM, "a full table names no new site");
  is_u64(cmg__py_sites_dropped(), 1, "and counts it");
  struct cmg__py_where w = where(0x7000, 6, 42);
  is_int(cmg__py_site(&objects, &w), 1, "a site already named keeps its id");
  w = where(0x9000000, 0, 9);
  is_int(cmg__py_site(&objects, &w), CMG__PY_NO_ROOM, "another new one");
  is_u64(cmg__py_sites_dropped(), 2, "counted too");
  struct cmg__py_site_view v;
  ok(cmg__py_site_get(32768, &v) && !cmg__py_site_get(CMG__PY_NO_ROOM, &v),
     "the last id is known, the mark is not");
}

int
main(void)
{
  test_lines();
  test_sites();
  test_names();
  test_recent();
  test_threads();
  test_full();
  return done_testing();
}
