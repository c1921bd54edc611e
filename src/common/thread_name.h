#pragma once

namespace hookrelay {

// Names the calling thread ("hr-" prefix, at most 15 characters as Linux allows; longer names are
// cut), so `top -H`, `ps -L`, gdb and perf tell hookrelay's threads apart.
void NameThisThread(const char* name);

}  // namespace hookrelay
