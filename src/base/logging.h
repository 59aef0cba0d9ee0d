// Minimal logging and CHECK. CHECK is for programmer bugs only; bad input gets a Status.
#pragma once

#include <sstream>
#include <string>

namespace dflow::logging {

enum class Severity { kInfo, kWarning, kError, kFatal };

// Messages below this severity are dropped. Set from DFLOW_LOG_LEVEL (0 info .. 3 fatal); default
// warning so that libraries stay quiet unless asked.
Severity MinSeverity();
void SetMinSeverity(Severity s);

class LogMessage {
 public:
  LogMessage(const char* file, int line, Severity severity);
  ~LogMessage();
  std::ostream& stream() { return stream_; }

 private:
  const char* file_;
  int line_;
  Severity severity_;
  std::ostringstream stream_;
};

// Swallows the stream expression when a log level is disabled.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace dflow::logging

#define DFLOW_LOG_INFO ::dflow::logging::Severity::kInfo
#define DFLOW_LOG_WARNING ::dflow::logging::Severity::kWarning
#define DFLOW_LOG_ERROR ::dflow::logging::Severity::kError
#define DFLOW_LOG_FATAL ::dflow::logging::Severity::kFatal

#define LOG(sev)                                        \
  !(DFLOW_LOG_##sev >= ::dflow::logging::MinSeverity()) \
      ? (void)0                                         \
      : ::dflow::logging::Voidify() & ::dflow::logging::LogMessage(__FILE__, __LINE__, DFLOW_LOG_##sev).stream()

#define CHECK(cond)                                                                                                 \
  (cond) ? (void)0                                                                                                  \
         : ::dflow::logging::Voidify() & ::dflow::logging::LogMessage(__FILE__, __LINE__, DFLOW_LOG_FATAL).stream() \
                                             << "Check failed: " #cond " "

#define CHECK_OK(expr)          \
  do {                          \
    ::absl::Status _s = (expr); \
    CHECK(_s.ok()) << _s;       \
  } while (0)

#ifdef NDEBUG
#define DCHECK(cond) \
  while (false) CHECK(cond)
#else
#define DCHECK(cond) CHECK(cond)
#endif
