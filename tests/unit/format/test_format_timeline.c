// SPDX-License-Identifier: BSD-2-Clause
int main(void) { return 0; }
