#include "framework/device.h"

#include "base/logging.h"
#include "framework/file_policy.h"

namespace dflow {

Device::Device(std::string name, std::string device_type) : name_(std::move(name)), type_(std::move(device_type)) {
  auto p = DeviceName::Parse(name_);
  CHECK(p.ok() && p->IsFullySpecified()) << "device name must be full: " << name_;
  parsed_ = *p;
  file_env_ = MakeFileEnv(nullptr);
}

void Device::set_file_policy(std::shared_ptr<const FilePolicy> policy) {
  file_policy_ = std::move(policy);
  file_env_ = MakeFileEnv(file_policy_);
}

}  // namespace dflow
