#include "tensor/memory_budget.h"

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace dflow {
namespace {

// The first line of a small file, or "" when it cannot be read.
std::string ReadFirstLine(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  return line;
}

// MemTotal of /proc/meminfo in bytes; 0 when unknown.
int64_t MachineMemory() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (f >> key >> kib) {
    std::getline(f, unit);
    if (key == "MemTotal:") return kib * 1024;
  }
  return 0;
}

// The memory limit of this process's cgroup (v2 memory.max, else v1 memory.limit_in_bytes);
// 0 when there is none or it cannot be read.
int64_t CgroupMemoryLimit() {
  std::ifstream f("/proc/self/cgroup");
  std::string line, v2_path, v1_path;
  while (std::getline(f, line)) {
    // "0::/path" (v2) or "4:memory:/path" (v1).
    if (absl::StartsWith(line, "0::")) v2_path = line.substr(3);
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b != std::string::npos && line.substr(a + 1, b - a - 1) == "memory") v1_path = line.substr(b + 1);
  }
  auto parse = [](const std::string& s) -> int64_t {
    int64_t v = 0;
    if (s.empty() || s == "max" || !absl::SimpleAtoi(s, &v) || v <= 0) return 0;
    // cgroup v1 reports "no limit" as a huge number (LONG_MAX rounded to pages).
    if (v >= (int64_t{1} << 60)) return 0;
    return v;
  };
  // A limit on any ancestor applies too: the smallest along the path.
  int64_t best = 0;
  auto consider = [&](int64_t v) {
    if (v > 0 && (best == 0 || v < best)) best = v;
  };
  auto walk = [&](std::string base, std::string path, const char* file) {
    while (true) {
      consider(parse(ReadFirstLine(absl::StrCat(base, path == "/" ? "" : path, "/", file))));
      if (path.empty() || path == "/") break;
      size_t slash = path.rfind('/');
      path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
    }
  };
  if (!v2_path.empty()) walk("/sys/fs/cgroup", v2_path, "memory.max");
  if (!v1_path.empty()) walk("/sys/fs/cgroup/memory", v1_path, "memory.limit_in_bytes");
  return best;
}

}  // namespace

Status MemoryBudget::Charge(int64_t bytes) {
  const int64_t limit = limit_.load(std::memory_order_relaxed);
  int64_t used = in_use_.load(std::memory_order_relaxed);
  for (;;) {
    if (limit > 0 && (bytes > limit || used > limit - bytes)) {
      return errors::ResourceExhausted("Allocating ", HumanReadableBytes(bytes),
                                       " would exceed this task's memory budget for steps (", HumanReadableBytes(limit),
                                       ", of which ", HumanReadableBytes(used),
                                       " in use; set with --step_memory_limit)");
    }
    if (in_use_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed)) break;
  }
  const int64_t now = used + bytes;
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return absl::OkStatus();
}

int64_t MemoryBudget::DefaultLimit() {
  static const int64_t limit = [] {
    int64_t machine = MachineMemory();
    int64_t cgroup = CgroupMemoryLimit();
    int64_t usable = machine;
    if (cgroup > 0 && (usable == 0 || cgroup < usable)) usable = cgroup;
    return usable / 2;
  }();
  return limit;
}

std::string HumanReadableBytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (int64_t{1} << 30)) return absl::StrFormat("%.2f GiB", b / (1 << 30));
  if (bytes >= (int64_t{1} << 20)) return absl::StrFormat("%.2f MiB", b / (1 << 20));
  if (bytes >= (int64_t{1} << 10)) return absl::StrFormat("%.2f KiB", b / (1 << 10));
  return absl::StrCat(bytes, " bytes");
}

}  // namespace dflow
