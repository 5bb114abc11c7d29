// Error classes, strings and the Status -> class mapping.
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "memcopy/status.h"
#include "mpigpu_api/errors.h"
#include "mpigpu_api/mpigpu.h"

namespace mpigpu {
namespace {

std::string ErrorString(int code, int* rc = nullptr) {
  char buf[MPIGPU_MAX_ERROR_STRING];
  std::memset(buf, 'x', sizeof(buf));
  int len = -1;
  int r = MPIGPU_Error_string(code, buf, &len);
  if (rc != nullptr) *rc = r;
  EXPECT_GE(len, 0);
  EXPECT_LT(len, MPIGPU_MAX_ERROR_STRING);
  EXPECT_EQ(buf[len], '\0');
  EXPECT_EQ(std::strlen(buf), static_cast<size_t>(len));
  return buf;
}

TEST(ApiErrorsTest, EveryClassHasADistinctNonEmptyString) {
  std::set<std::string> seen;
  for (int code = MPIGPU_SUCCESS; code <= MPIGPU_ERR_LASTCODE; ++code) {
    int rc = -1;
    std::string s = ErrorString(code, &rc);
    EXPECT_EQ(rc, MPIGPU_SUCCESS) << code;
    EXPECT_FALSE(s.empty()) << code;
    EXPECT_TRUE(seen.insert(s).second) << "duplicate string for code " << code << ": " << s;
    EXPECT_NE(ErrorClassName(code), nullptr);
    EXPECT_NE(s.find(ErrorClassName(code)), std::string::npos) << s;
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(MPIGPU_ERR_LASTCODE + 1));
}

TEST(ApiErrorsTest, ClassesAreDistinctAndCodesEqualClasses) {
  const int classes[] = {MPIGPU_ERR_RANK,     MPIGPU_ERR_COUNT,  MPIGPU_ERR_TAG,
                         MPIGPU_ERR_TYPE,     MPIGPU_ERR_BUFFER, MPIGPU_ERR_COMM,
                         MPIGPU_ERR_REQUEST,  MPIGPU_ERR_TRUNCATE, MPIGPU_ERR_PROC_FAILED,
                         MPIGPU_ERR_NO_GPU,   MPIGPU_ERR_INTERN, MPIGPU_ERR_OTHER,
                         MPIGPU_ERR_ARG,      MPIGPU_ERR_OP,     MPIGPU_ERR_NOT_INITIALIZED};
  std::set<int> distinct(std::begin(classes), std::end(classes));
  EXPECT_EQ(distinct.size(), std::size(classes));
  for (int c : classes) {
    EXPECT_GT(c, MPIGPU_SUCCESS);
    EXPECT_LE(c, MPIGPU_ERR_LASTCODE);
    int cls = -1;
    EXPECT_EQ(MPIGPU_Error_class(c, &cls), MPIGPU_SUCCESS);
    EXPECT_EQ(cls, c);
  }
}

TEST(ApiErrorsTest, BadCodeIsAnArgErrorAndSaysSo) {
  for (int bad : {-1, MPIGPU_ERR_LASTCODE + 1, 12345}) {
    int rc = -1;
    std::string s = ErrorString(bad, &rc);
    EXPECT_EQ(rc, MPIGPU_ERR_ARG);
    EXPECT_NE(s.find(std::to_string(bad)), std::string::npos) << s;
    int cls = -7;
    EXPECT_EQ(MPIGPU_Error_class(bad, &cls), MPIGPU_ERR_ARG);
    EXPECT_EQ(cls, -7);  // untouched
  }
}

TEST(ApiErrorsTest, NullPointersAreArgErrors) {
  char buf[MPIGPU_MAX_ERROR_STRING];
  int len = 0;
  EXPECT_EQ(MPIGPU_Error_string(MPIGPU_ERR_TAG, nullptr, &len), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Error_string(MPIGPU_ERR_TAG, buf, nullptr), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Error_class(MPIGPU_ERR_TAG, nullptr), MPIGPU_ERR_ARG);
}

TEST(ApiErrorsTest, StatusMapsToClasses) {
  EXPECT_EQ(ErrorClassOf(Status::Ok()), MPIGPU_SUCCESS);
  EXPECT_EQ(ErrorClassOf(Err::kInvalidArg), MPIGPU_ERR_ARG);
  EXPECT_EQ(ErrorClassOf(Err::kInvalidArg, MPIGPU_ERR_COUNT), MPIGPU_ERR_COUNT);
  EXPECT_EQ(ErrorClassOf(Err::kNoGpu), MPIGPU_ERR_NO_GPU);
  EXPECT_EQ(ErrorClassOf(Err::kTruncate), MPIGPU_ERR_TRUNCATE);
  EXPECT_EQ(ErrorClassOf(Err::kPeerFailed), MPIGPU_ERR_PROC_FAILED);
  EXPECT_EQ(ErrorClassOf(Err::kInternal), MPIGPU_ERR_INTERN);
  EXPECT_EQ(ErrorClassOf(Err::kNoMemory), MPIGPU_ERR_INTERN);
  EXPECT_EQ(ErrorClassOf(Err::kCuda), MPIGPU_ERR_OTHER);
  EXPECT_EQ(ErrorClassOf(Err::kSystem), MPIGPU_ERR_OTHER);
  EXPECT_EQ(ErrorClassOf(Err::kTimeout), MPIGPU_ERR_OTHER);
  // The specific class given by the caller only replaces kInvalidArg.
  EXPECT_EQ(ErrorClassOf(Err::kTruncate, MPIGPU_ERR_COUNT), MPIGPU_ERR_TRUNCATE);
  EXPECT_EQ(ErrorClassOf(Status(Err::kNoGpu, "x"), MPIGPU_ERR_BUFFER), MPIGPU_ERR_NO_GPU);
}

TEST(ApiErrorsTest, ReturnCodeKeepsTheDetailForErrorString) {
  EXPECT_EQ(ReturnCode(Status::Ok()), MPIGPU_SUCCESS);
  EXPECT_EQ(ReturnCode(Status(Err::kInvalidArg, "tag -7 is negative"), MPIGPU_ERR_TAG),
            MPIGPU_ERR_TAG);
  std::string s = ErrorString(MPIGPU_ERR_TAG);
  EXPECT_NE(s.find("tag -7 is negative"), std::string::npos) << s;
  EXPECT_NE(s.find("MPIGPU_ERR_TAG"), std::string::npos) << s;
  // Another class carries no detail; nor does the same class on another thread.
  EXPECT_EQ(ErrorString(MPIGPU_ERR_RANK).find("tag -7"), std::string::npos);
  std::string other_thread;
  std::thread([&] { other_thread = ErrorMessage(MPIGPU_ERR_TAG); }).join();
  EXPECT_EQ(other_thread.find("tag -7"), std::string::npos) << other_thread;
  EXPECT_EQ(LastErrorDetail(MPIGPU_ERR_TAG), "invalid argument: tag -7 is negative");
}

TEST(ApiErrorsTest, LongDetailIsTruncatedToTheLimit) {
  SetLastError(MPIGPU_ERR_OTHER, std::string(3000, 'd'));
  char buf[MPIGPU_MAX_ERROR_STRING];
  int len = 0;
  EXPECT_EQ(MPIGPU_Error_string(MPIGPU_ERR_OTHER, buf, &len), MPIGPU_SUCCESS);
  EXPECT_EQ(len, MPIGPU_MAX_ERROR_STRING - 1);
  EXPECT_EQ(buf[len], '\0');
  EXPECT_EQ(buf[len - 1], 'd');
}

}  // namespace
}  // namespace mpigpu
