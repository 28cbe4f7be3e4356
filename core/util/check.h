#ifndef ORDO_CORE_UTIL_CHECK_H_
#define ORDO_CORE_UTIL_CHECK_H_

// ORDO_CHECK(cond) aborts with file:line when an internal invariant breaks.
// Only for bugs: nothing an untrusted model can trigger may reach a CHECK.

#include <cstdio>
#include <cstdlib>

#define ORDO_CHECK(cond)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                 \
      std::abort();                                                        \
    }                                                                      \
  } while (0)

#endif  // ORDO_CORE_UTIL_CHECK_H_
