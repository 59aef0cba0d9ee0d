#include "tools/events_cmd.h"

#include <ostream>

#include "proto/event.pb.h"
#include "tensor/tensor.h"
#include "train/event_file_reader.h"

namespace dflow::tools {

int RunEventsCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() != 1) {
    err << "usage: dflow events FILE\n";
    return 2;
  }
  auto reader = summary::EventFileReader::Open(args[0]);
  if (!reader.ok()) {
    err << "error: " << reader.status() << "\n";
    return 1;
  }
  proto::Event event;
  while (true) {
    Status s = (*reader)->ReadNext(&event);
    if (absl::IsOutOfRange(s)) return 0;
    if (!s.ok()) {
      err << "error: " << s << "\n";
      return 1;
    }
    for (const summary::ScalarEvent& e : summary::ScalarsOfEvent(event)) {
      const std::string value = e.single_precision ? FormatNumber(static_cast<float>(e.value)) : FormatNumber(e.value);
      out << e.tag << " " << e.step << " " << value << "\n";
    }
  }
}

}  // namespace dflow::tools
