#include "base/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dflow::logging {
namespace {
std::atomic<int> g_min_severity{-1};

int InitialSeverity() {
  const char* env = std::getenv("DFLOW_LOG_LEVEL");
  if (env != nullptr && env[0] >= '0' && env[0] <= '3' && env[1] == '\0') return env[0] - '0';
  return static_cast<int>(Severity::kWarning);
}
}  // namespace

Severity MinSeverity() {
  int v = g_min_severity.load(std::memory_order_relaxed);
  if (v < 0) {
    v = InitialSeverity();
    g_min_severity.store(v, std::memory_order_relaxed);
  }
  return static_cast<Severity>(v);
}

void SetMinSeverity(Severity s) { g_min_severity.store(static_cast<int>(s)); }

LogMessage::LogMessage(const char* file, int line, Severity severity) : file_(file), line_(line), severity_(severity) {}

LogMessage::~LogMessage() {
  static const char kLetters[] = {'I', 'W', 'E', 'F'};
  const char* base = std::strrchr(file_, '/');
  base = base ? base + 1 : file_;
  std::string msg = stream_.str();
  std::fprintf(stderr, "%c %s:%d] %s\n", kLetters[static_cast<int>(severity_)], base, line_, msg.c_str());
  if (severity_ == Severity::kFatal) {
    std::fflush(stderr);
    std::abort();
  }
}

}  // namespace dflow::logging
