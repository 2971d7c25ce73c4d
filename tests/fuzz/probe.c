/* SPDX-License-Identifier: BSD-2-Clause */
/* Configure-time probe (tests/meson.build): does clang link -fsanitize=fuzzer here? */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0;
}
