// Declarations only: LLVMFuzzerRunDriver is libFuzzer's, linked by -sanitize=fuzzer.
#include "CFuzzDriver.h"
