#ifndef C_FUZZ_DRIVER_H
#define C_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver, for a program that has a `main` of its own (SwiftPM gives every executable one).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
