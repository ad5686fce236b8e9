#include "backends/cuda/module_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cuda/jit.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/cuda/testing/fake_cuda_driver.h"
#include "common/fnv1a.h"
#include "common/testing/scoped_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Optional;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    path_ = absl::StrCat(testing::TempDir(), "/module_cache_test_", getpid(),
                         "_", counter_++);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path, std::ios::binary).rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

std::vector<std::string> NamesIn(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

std::string Ptx(absl::string_view spelling) {
  return RegisterModule(*ParseVariant(spelling), *TargetForDevice(90));
}

ModuleKey KeyOf(absl::string_view spelling) {
  const std::string ptx = Ptx(spelling);
  return {.variant_id = StableId(*ParseVariant(spelling)),
          .mode = KernelMode::kRegister,
          .sm = 90,
          .driver_version = 13000,
          .toolkit_version = 13000,
          .ptx_hash = Fnv1a64(ptx)};
}

TEST(ModuleKeyTest, NameHoldsEveryField) {
  const ModuleKey key = {.variant_id = 0x866d3c5830861652,
                         .mode = KernelMode::kImmediate,
                         .sm = 90,
                         .driver_version = 12040,
                         .toolkit_version = 13000,
                         .ptx_hash = 0xabc};
  EXPECT_EQ(key.Name(),
            "866d3c5830861652-immediate-sm90-driver12040-cuda13000-"
            "0000000000000abc");
  std::vector<ModuleKey> keys(7, key);
  keys[1].variant_id = 1;
  keys[2].mode = KernelMode::kRegister;
  keys[3].sm = 89;
  keys[4].driver_version = 12050;
  keys[5].toolkit_version = 12090;
  keys[6].ptx_hash = 0xabd;
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = i + 1; j < keys.size(); ++j) {
      EXPECT_NE(keys[i].Name(), keys[j].Name());
      EXPECT_FALSE(keys[i] == keys[j]);
    }
  }
}

TEST(ImageFileTest, RoundTrip) {
  const ModuleKey key = KeyOf("add.s32");
  const std::string image(
      "\x7f"
      "ELF\0\1\2 binary\n",
      15);
  EXPECT_THAT(DecodeImageFile(key, EncodeImageFile(key, image)),
              Optional(image));
}

TEST(ImageFileTest, EveryDamageIsRejected) {
  const ModuleKey key = KeyOf("add.s32");
  const std::string good = EncodeImageFile(key, "some image bytes");
  std::vector<std::string> bad = {
      "",
      "garbage",
      good.substr(0, good.size() - 1),                        // truncated
      good + "x",                                             // trailing bytes
      EncodeImageFile(KeyOf("sub.s32"), "some image bytes"),  // another key
      EncodeImageFile(key, ""),                               // empty image
  };
  std::string flipped = good;
  flipped.back() ^= 1;  // the checksum no longer matches
  bad.push_back(flipped);
  std::string wrong_magic = good;
  wrong_magic[0] = 'q';
  bad.push_back(wrong_magic);
  for (const std::string& contents : bad) {
    EXPECT_EQ(DecodeImageFile(key, contents), std::nullopt) << contents;
  }
}

TEST(ImageCacheTest, EmptyDirDisablesIt) {
  ImageCache cache("");
  EXPECT_FALSE(cache.enabled());
  EXPECT_TRUE(cache.Store(KeyOf("add.s32"), "image").ok());
  EXPECT_EQ(cache.Load(KeyOf("add.s32")), std::nullopt);
}

TEST(ImageCacheTest, StoresAtomicallyAndLoads) {
  TempDir dir;
  ImageCache cache(dir.path());
  const ModuleKey key = KeyOf("add.s32");
  EXPECT_EQ(cache.Load(key), std::nullopt);
  ASSERT_TRUE(cache.Store(key, "image").ok());
  EXPECT_THAT(cache.Load(key), Optional(std::string("image")));
  // One file under <dir>/cuda, named by the key; no temporary left behind.
  EXPECT_EQ(cache.PathOf(key),
            absl::StrCat(dir.path(), "/cuda/", key.Name(), ".cubin"));
  EXPECT_THAT(NamesIn(dir.path() + "/cuda"),
              testing::ElementsAre(key.Name() + ".cubin"));
  EXPECT_EQ(cache.corrupt_files(), 0);
}

TEST(ImageCacheTest, CorruptFileIsIgnoredThenRewritten) {
  TempDir dir;
  ImageCache cache(dir.path());
  const ModuleKey key = KeyOf("add.s32");
  ASSERT_TRUE(cache.Store(key, "image").ok());
  std::string contents = ReadFile(cache.PathOf(key));
  WriteFile(cache.PathOf(key), contents.substr(0, contents.size() - 2));
  EXPECT_EQ(cache.Load(key), std::nullopt);
  EXPECT_EQ(cache.corrupt_files(), 1);
  ASSERT_TRUE(cache.Store(key, "image").ok());
  EXPECT_THAT(cache.Load(key), Optional(std::string("image")));
}

TEST(ImageCacheTest, UnwritableDirectoryIsAnError) {
  TempDir dir;
  WriteFile(dir.path() + "/cuda", "a file where the directory should be");
  ImageCache cache(dir.path());
  const absl::Status stored = cache.Store(KeyOf("add.s32"), "image");
  EXPECT_EQ(stored.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(stored.message()), HasSubstr(dir.path()));
}

TEST(DefaultCacheDirTest, XdgThenHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(DefaultCacheDir(), "/x/cache/ptxdiff");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/u");
    EXPECT_EQ(DefaultCacheDir(), "/home/u/.cache/ptxdiff");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "relative");  // not absolute: ignored
    ScopedEnv home("HOME", nullptr);
    EXPECT_EQ(DefaultCacheDir(), "");
  }
}

TEST(ModuleCacheTest, CompilesOnceThenHitsMemory) {
  TempDir dir;
  FakeCudaDriver driver;
  {
    ModuleCache cache(driver, ImageCache(dir.path()));
    const ModuleKey key = KeyOf("add.s32");
    auto first = cache.Get(key, Ptx("add.s32"));
    ASSERT_TRUE(first.ok()) << first.status();
    auto second = cache.Get(key, Ptx("add.s32"));
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(*first, *second);
    EXPECT_EQ(cache.stats().compiles, 1);
    EXPECT_EQ(cache.stats().memory_hits, 1);
    EXPECT_EQ(driver.CallCount("LinkCreate"), 1);
    EXPECT_EQ(driver.CallCount("LinkDestroy"), 1);
    EXPECT_EQ(driver.CallCount("ModuleLoadDataEx"), 1);
    EXPECT_TRUE(fs::exists(cache.images().PathOf(key)));
  }
  EXPECT_EQ(driver.Leaks(), "");
}

// A new worker (new driver, new cache) loads the image instead of compiling.
TEST(ModuleCacheTest, RestartedWorkerLoadsFromDisk) {
  TempDir dir;
  const ModuleKey key = KeyOf("vadd.u32.u32.u32.sat d.b1, a, b.h0, c");
  const std::string ptx = Ptx("vadd.u32.u32.u32.sat d.b1, a, b.h0, c");
  {
    FakeCudaDriver driver;
    ModuleCache cache(driver, ImageCache(dir.path()));
    ASSERT_TRUE(cache.Get(key, ptx).ok());
  }
  FakeCudaDriver driver;
  ModuleCache cache(driver, ImageCache(dir.path()));
  ASSERT_TRUE(cache.Get(key, ptx).ok());
  EXPECT_EQ(cache.stats().disk_hits, 1);
  EXPECT_EQ(cache.stats().compiles, 0);
  EXPECT_EQ(driver.CallCount("LinkCreate"), 0);
  EXPECT_EQ(driver.CallCount("ModuleLoadDataEx"), 1);
  // Another driver version is another key: compiled again.
  ModuleKey newer = key;
  newer.driver_version = 13010;
  ASSERT_TRUE(cache.Get(newer, ptx).ok());
  EXPECT_EQ(cache.stats().compiles, 1);
}

TEST(ModuleCacheTest, CorruptFileIsRecompiledAndRewritten) {
  TempDir dir;
  const ModuleKey key = KeyOf("add.s32");
  FakeCudaDriver driver;
  ModuleCache cache(driver, ImageCache(dir.path()));
  const std::string path = cache.images().PathOf(key);
  fs::create_directories(fs::path(path).parent_path());
  WriteFile(path, "not a cache file");
  ASSERT_TRUE(cache.Get(key, Ptx("add.s32")).ok());
  EXPECT_EQ(cache.stats().compiles, 1);
  EXPECT_EQ(cache.images().corrupt_files(), 1);
  EXPECT_TRUE(DecodeImageFile(key, ReadFile(path)).has_value());
}

// A file whose checks pass but whose image the driver refuses: dropped,
// compiled again, rewritten.
TEST(ModuleCacheTest, RefusedImageIsRecompiled) {
  TempDir dir;
  const ModuleKey key = KeyOf("add.s32");
  FakeCudaDriver driver;
  ModuleCache cache(driver, ImageCache(dir.path()));
  ASSERT_TRUE(cache.images().Store(key, "an image from another driver").ok());
  ASSERT_TRUE(cache.Get(key, Ptx("add.s32")).ok());
  EXPECT_EQ(cache.stats().rejected_images, 1);
  EXPECT_EQ(cache.stats().compiles, 1);
  EXPECT_THAT(DecodeImageFile(key, ReadFile(cache.images().PathOf(key))),
              Optional(HasSubstr("FAKE-CUBIN")));
}

TEST(ModuleCacheTest, JitErrorCarriesTheLog) {
  FakeCudaDriver driver;
  driver.RejectPtxContaining(
      "add.s32 %dst",
      "ptxas application ptx input, line 37; error   : Unknown modifier");
  ModuleCache cache(driver, ImageCache(""));
  auto module = cache.Get(KeyOf("add.s32"), Ptx("add.s32"));
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(std::string(module.status().message()),
              AllOf(HasSubstr("Failed to JIT-compile the kernel's PTX: "
                              "cuLinkAddData("),
                    HasSubstr("returned CUDA_ERROR_INVALID_PTX"),
                    HasSubstr("JIT log:\nptxas application ptx input, line 37; "
                              "error   : Unknown modifier")));
  EXPECT_THAT(CudaResultOf(module.status()), Optional(CUDA_ERROR_INVALID_PTX));
  EXPECT_TRUE(IsJitRejection(*CudaResultOf(module.status())));
  EXPECT_EQ(driver.CallCount("LinkDestroy"), 1);  // cleaned up on failure
  EXPECT_EQ(driver.Leaks(), "");
}

TEST(ModuleCacheTest, DriverFailuresDuringCompilation) {
  for (const char* method :
       {"LinkCreate", "LinkAddData", "LinkComplete", "ModuleLoadDataEx"}) {
    FakeCudaDriver driver;
    driver.FailCall(method, CUDA_ERROR_OUT_OF_MEMORY);
    ModuleCache cache(driver, ImageCache(""));
    auto module = cache.Get(KeyOf("add.s32"), Ptx("add.s32"));
    ASSERT_FALSE(module.ok()) << method;
    EXPECT_THAT(std::string(module.status().message()),
                HasSubstr(absl::StrCat("cu", method, "(")));
    EXPECT_EQ(cache.size(), 0u);
    EXPECT_EQ(driver.Leaks(), "") << method;
  }
}

TEST(ModuleCacheTest, UnwritableCacheWarnsOnceAndGoesOn) {
  TempDir dir;
  WriteFile(dir.path() + "/cuda", "in the way");
  FakeCudaDriver driver;
  ModuleCache cache(driver, ImageCache(dir.path()));
  testing::internal::CaptureStderr();
  ASSERT_TRUE(cache.Get(KeyOf("add.s32"), Ptx("add.s32")).ok());
  ASSERT_TRUE(cache.Get(KeyOf("sub.s32"), Ptx("sub.s32")).ok());
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("warning: not caching compiled kernels"));
  EXPECT_EQ(err.find("warning"), err.rfind("warning"));
}

TEST(ModuleCacheTest, TrimUnloadsTheLeastRecentlyUsed) {
  FakeCudaDriver driver;
  {
    ModuleCache cache(driver, ImageCache(""));
    const std::vector<std::string> names = {"add.s32", "sub.s32", "min.u32"};
    std::vector<CUmodule> modules;
    for (const std::string& n : names) {
      modules.push_back(*cache.Get(KeyOf(n), Ptx(n)));
    }
    ASSERT_TRUE(cache.Get(KeyOf("add.s32"), Ptx("add.s32")).ok());  // touch
    cache.Trim(2);
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(driver.CallCount("ModuleUnload"), 1);
    // sub.s32 went; add.s32 and min.u32 are still memory hits.
    const int compiles = cache.stats().compiles;
    ASSERT_TRUE(cache.Get(KeyOf("add.s32"), Ptx("add.s32")).ok());
    ASSERT_TRUE(cache.Get(KeyOf("min.u32"), Ptx("min.u32")).ok());
    EXPECT_EQ(cache.stats().compiles, compiles);
    ASSERT_TRUE(cache.Get(KeyOf("sub.s32"), Ptx("sub.s32")).ok());
    EXPECT_EQ(cache.stats().compiles, compiles + 1);
  }
  EXPECT_EQ(driver.Leaks(), "");  // the destructor unloaded the rest
}

}  // namespace
}  // namespace ptxdiff
