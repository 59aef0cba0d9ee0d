// Event files (`dflow events`, summary_iterator): every record parsed as an Event and its
// scalars extracted, as the command prints them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "proto/event.pb.h"
#include "train/event_file_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  static const bool quiet = fuzz::QuietProtobuf();
  (void)quiet;
  fuzz::MemEnv env;
  env.Put("events.out.tfevents", std::string(reinterpret_cast<const char*>(data), size));
  auto reader = summary::EventFileReader::Open("events.out.tfevents", &env);
  FUZZ_CHECK(reader.ok());
  proto::Event event;
  Status s;
  while ((s = (*reader)->ReadNext(&event)).ok()) {
    for (const summary::ScalarEvent& e : summary::ScalarsOfEvent(event)) (void)e.tag.size();
  }
  fuzz::Note("read", s);
  auto scalars = summary::ReadScalars("events.out.tfevents", &env);
  (void)scalars;
  return 0;
}
