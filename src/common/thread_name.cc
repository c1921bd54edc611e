#include "common/thread_name.h"

#include <pthread.h>

#include <cstring>

namespace hookrelay {

void NameThisThread(const char* name) {
  char shortened[16];
  std::strncpy(shortened, name, sizeof shortened - 1);
  shortened[sizeof shortened - 1] = '\0';
  pthread_setname_np(pthread_self(), shortened);  // only fails for names over 15 characters
}

}  // namespace hookrelay
