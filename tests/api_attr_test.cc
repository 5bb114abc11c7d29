// Attributes of the public API in forked ranks: keyvals with copy and delete callbacks, which
// run on dup (in the order set), free (newest first), delete and overwrite; NULL_COPY_FN and
// DUP_FN; a freed keyval whose attributes still get their delete callbacks; the predefined
// attributes of WORLD; COMM_SELF's attributes deleted at Finalize; errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

// What the callbacks saw, in order: "c<key>:<value>" for copies, "d<key>:<value>" for deletes.
std::vector<std::string>& Log() {
  static std::vector<std::string> log;
  return log;
}
int g_keys[3];
int Index(int key) {
  for (int i = 0; i < 3; ++i)
    if (g_keys[i] == key) return i;
  return -1;
}

// Copies value + 100, and calls back into the library (it must not deadlock).
int CopyPlus(MPIGPU_Comm old, int key, void* extra, void* in, void* out, int* flag) {
  int size = 0;
  if (MPIGPU_Comm_size(old, &size) != MPIGPU_SUCCESS) return MPIGPU_ERR_OTHER;
  RANK_CHECK(extra == &g_keys);
  const long v = reinterpret_cast<long>(in);
  Log().push_back("c" + std::to_string(Index(key)) + ":" + std::to_string(v));
  *static_cast<void**>(out) = reinterpret_cast<void*>(v + 100);
  *flag = 1;
  return MPIGPU_SUCCESS;
}

int DeleteLog(MPIGPU_Comm comm, int key, void* value, void* extra) {
  int flag = 0;
  void* seen = nullptr;
  // During its delete callback the attribute is still readable.
  if (MPIGPU_Comm_get_attr(comm, key, &seen, &flag) != MPIGPU_SUCCESS) return MPIGPU_ERR_OTHER;
  RANK_CHECK(extra == &g_keys);
  Log().push_back("d" + std::to_string(Index(key)) + ":" +
                  std::to_string(reinterpret_cast<long>(value)));
  return MPIGPU_SUCCESS;
}

int DeleteFails(MPIGPU_Comm, int, void*, void*) { return MPIGPU_ERR_OTHER; }

std::string Joined() {
  std::string s;
  for (const std::string& e : Log()) s += e + " ";
  Log().clear();
  return s;
}

TEST(ApiAttrTest, CallbacksRunInMpiOrder) {
  std::string r = RunApiJob(2, [](int) {
    // Key 0: copy +100, key 1: DUP_FN, key 2: NULL_COPY_FN; all log their deletes.
    API_OK(MPIGPU_Comm_create_keyval(CopyPlus, DeleteLog, &g_keys[0], &g_keys));
    API_OK(MPIGPU_Comm_create_keyval(MPIGPU_COMM_DUP_FN, DeleteLog, &g_keys[1], &g_keys));
    API_OK(MPIGPU_Comm_create_keyval(MPIGPU_COMM_NULL_COPY_FN, DeleteLog, &g_keys[2], &g_keys));
    MPIGPU_Comm a;
    API_OK(MPIGPU_Comm_dup(kWorld, &a));
    API_OK(MPIGPU_Comm_set_attr(a, g_keys[2], reinterpret_cast<void*>(3)));
    API_OK(MPIGPU_Comm_set_attr(a, g_keys[0], reinterpret_cast<void*>(1)));
    API_OK(MPIGPU_Comm_set_attr(a, g_keys[1], reinterpret_cast<void*>(2)));
    // Overwriting deletes the old value.
    API_OK(MPIGPU_Comm_set_attr(a, g_keys[1], reinterpret_cast<void*>(22)));
    RANK_CHECK(Joined() == "d1:2 ");
    MPIGPU_Comm b;
    API_OK(MPIGPU_Comm_dup(a, &b));
    RANK_CHECK(Joined() == "c0:1 ");  // DUP_FN and NULL_COPY_FN do not log
    void* v = nullptr;
    int flag = -1;
    API_OK(MPIGPU_Comm_get_attr(b, g_keys[0], &v, &flag));
    RANK_CHECK(flag == 1 && reinterpret_cast<long>(v) == 101);
    API_OK(MPIGPU_Comm_get_attr(b, g_keys[1], &v, &flag));
    RANK_CHECK(flag == 1 && reinterpret_cast<long>(v) == 22);
    API_OK(MPIGPU_Comm_get_attr(b, g_keys[2], &v, &flag));
    RANK_CHECK(flag == 0);
    // delete_attr runs the callback; the attribute is gone after.
    API_OK(MPIGPU_Comm_delete_attr(b, g_keys[0]));
    RANK_CHECK(Joined() == "d0:101 ");
    API_OK(MPIGPU_Comm_get_attr(b, g_keys[0], &v, &flag));
    RANK_CHECK(flag == 0);
    // A freed keyval: no new uses, but its attributes stay and get their delete callback.
    int k1 = g_keys[1];
    API_OK(MPIGPU_Comm_free_keyval(&k1));
    RANK_CHECK(k1 == MPIGPU_KEYVAL_INVALID);
    API_OK(MPIGPU_Comm_free(&b));
    RANK_CHECK(Joined() == "d1:22 ");
    // Free deletes newest first (set order was 2, 0, 1).
    API_OK(MPIGPU_Comm_free(&a));
    RANK_CHECK(Joined() == "d1:22 d0:1 d2:3 ");

    // Errors.
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    API_FAILS(MPIGPU_ERR_KEYVAL, MPIGPU_Comm_set_attr(kWorld, g_keys[1], nullptr));  // freed
    API_FAILS(MPIGPU_ERR_KEYVAL, MPIGPU_Comm_get_attr(kWorld, 999999, &v, &flag));
    API_FAILS(MPIGPU_ERR_KEYVAL, MPIGPU_Comm_delete_attr(kWorld, g_keys[0]));  // not set
    API_FAILS(MPIGPU_ERR_KEYVAL, MPIGPU_Comm_set_attr(kWorld, MPIGPU_KEYVAL_TAG_UB, nullptr));
    int tag_ub = MPIGPU_KEYVAL_TAG_UB;
    API_FAILS(MPIGPU_ERR_KEYVAL, MPIGPU_Comm_free_keyval(&tag_ub));
    API_FAILS(MPIGPU_ERR_KEYVAL, MPIGPU_Comm_free_keyval(&k1));  // INVALID
    int k1copy = g_keys[1];
    API_FAILS(MPIGPU_ERR_KEYVAL, MPIGPU_Comm_free_keyval(&k1copy));  // gone: no attribute left
    // A live key (its attribute still set) may be freed again through a copy: nothing happens.
    int k3, k3copy;
    API_OK(MPIGPU_Comm_create_keyval(MPIGPU_COMM_NULL_COPY_FN, MPIGPU_COMM_NULL_DELETE_FN, &k3,
                                     nullptr));
    k3copy = k3;
    API_OK(MPIGPU_Comm_set_attr(MPIGPU_COMM_SELF, k3, nullptr));
    API_OK(MPIGPU_Comm_free_keyval(&k3));
    API_OK(MPIGPU_Comm_free_keyval(&k3copy));
    int tkey;
    API_OK(MPIGPU_Type_create_keyval(MPIGPU_TYPE_NULL_COPY_FN, MPIGPU_TYPE_NULL_DELETE_FN, &tkey,
                                     nullptr));
    API_FAILS(MPIGPU_ERR_KEYVAL, MPIGPU_Comm_set_attr(kWorld, tkey, nullptr));  // a type key
    // A failing delete callback fails the free; the communicator stays.
    int kf;
    API_OK(MPIGPU_Comm_create_keyval(MPIGPU_COMM_NULL_COPY_FN, DeleteFails, &kf, nullptr));
    MPIGPU_Comm c;
    API_OK(MPIGPU_Comm_dup(kWorld, &c));
    API_OK(MPIGPU_Comm_set_attr(c, kf, nullptr));
    API_FAILS(MPIGPU_ERR_OTHER, MPIGPU_Comm_free(&c));
    RANK_CHECK(c != MPIGPU_COMM_NULL);
    int size = 0;
    API_OK(MPIGPU_Comm_size(c, &size));
  });
  EXPECT_EQ(r, "");
}

TEST(ApiAttrTest, PredefinedAttributes) {
  std::string r = RunApiJob(3, [](int) {
    struct Want {
      int key, value;
    };
    const Want wants[] = {{MPIGPU_KEYVAL_TAG_UB, MPIGPU_TAG_UB},
                          {MPIGPU_KEYVAL_HOST, MPIGPU_PROC_NULL},
                          {MPIGPU_KEYVAL_IO, MPIGPU_ANY_SOURCE},
                          {MPIGPU_KEYVAL_WTIME_IS_GLOBAL, 0},
                          {MPIGPU_KEYVAL_UNIVERSE_SIZE, 3}};
    for (const Want& w : wants) {
      int* v = nullptr;
      int flag = 0;
      API_OK(MPIGPU_Comm_get_attr(kWorld, w.key, &v, &flag));
      RANK_CHECK(flag == 1 && v != nullptr && *v == w.value);
    }
  });
  EXPECT_EQ(r, "");
}

int g_self_deletes = 0;
int CountDelete(MPIGPU_Comm comm, int, void* value, void*) {
  // Still inside the library's life: calls work.
  int size = 0;
  if (MPIGPU_Comm_size(comm, &size) != MPIGPU_SUCCESS || size != 1) return MPIGPU_ERR_OTHER;
  g_self_deletes = g_self_deletes * 10 + static_cast<int>(reinterpret_cast<long>(value));
  return MPIGPU_SUCCESS;
}

TEST(ApiAttrTest, SelfAttributesDeletedAtFinalizeNewestFirst) {
  std::string r = RunJob(2, [](int) {
    API_OK(MPIGPU_Init(nullptr, nullptr));
    int k1, k2;
    API_OK(MPIGPU_Comm_create_keyval(MPIGPU_COMM_NULL_COPY_FN, CountDelete, &k1, nullptr));
    API_OK(MPIGPU_Comm_create_keyval(MPIGPU_COMM_NULL_COPY_FN, CountDelete, &k2, nullptr));
    API_OK(MPIGPU_Comm_set_attr(MPIGPU_COMM_SELF, k1, reinterpret_cast<void*>(1)));
    API_OK(MPIGPU_Comm_set_attr(MPIGPU_COMM_SELF, k2, reinterpret_cast<void*>(2)));
    API_OK(MPIGPU_Finalize());
    RANK_CHECK(g_self_deletes == 21);
    return 0;
  });
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing
