/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A shared library for test_elfsyms.c with more functions than elfsyms reads at a time
 * (1024 exported, 1024 static ones behind them) and names long enough that its string table
 * spans many read windows; a few exported aliases share an address with their target.
 */
#define NAME(n) sp_many_func_##n##_with_a_name_long_enough_to_fill_the_string_table
#define F(n)                                                                            \
	__attribute__((noinline)) static int sp_many_static_##n(int x)                    \
	{                                                                               \
		return x * (n + 3) + 1;                                                 \
	}                                                                               \
	__attribute__((noinline)) int NAME(n)(int x)                                     \
	{                                                                               \
		return sp_many_static_##n(x) ^ (n + 1);                                 \
	}
#define F4(n) F(n##0) F(n##1) F(n##2) F(n##3)
#define F16(n) F4(n##0) F4(n##1) F4(n##2) F4(n##3)
#define F64(n) F16(n##0) F16(n##1) F16(n##2) F16(n##3)
#define F256(n) F64(n##0) F64(n##1) F64(n##2) F64(n##3)

F256(10) F256(11) F256(12) F256(13)

/* aliases: the tables keep one name per address, the smallest by strcmp among globals */
int sp_many_alias_b(int x) __attribute__((alias("sp_many_func_100000_with_a_name_long_enough_to_fill_the_string_table")));
int sp_many_alias_a(int x) __attribute__((alias("sp_many_func_100000_with_a_name_long_enough_to_fill_the_string_table")));
int sp_many_zalias(int x) __attribute__((alias("sp_many_func_133333_with_a_name_long_enough_to_fill_the_string_table")));
