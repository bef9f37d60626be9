/* tests/unit/t_core_msg.c: message payload builders and bounds-checked readers. */
#include "msg.h"
#include "tap.h"

int main(void)
{
	struct core_wbuf w = {0};

	core_w_u32(&w, 0xdeadbeef);
	core_w_i64(&w, -5);
	core_w_str(&w, "hello");
	core_w_str(&w, NULL);
	core_w_bytes(&w, "\0\1\2", 3);
	ok(!w.err, "writes succeed");

	struct core_rbuf r = {.p = w.p, .len = w.len};
	is_int(core_r_u32(&r), 0xdeadbeef, "u32 round trip");
	is_int(core_r_i64(&r), -5, "i64 round trip");
	is_str(core_r_str(&r), "hello", "string round trip");
	is_str(core_r_str(&r), "", "NULL string reads as empty");
	const char *b = core_r_bytes(&r, 3);
	ok(b && b[0] == 0 && b[1] == 1 && b[2] == 2, "raw bytes round trip");
	ok(!r.err, "no error after exact reads");
	is_int(core_r_u32(&r), 0, "reading past the end gives 0");
	ok(r.err, "and sets err");

	/* a string whose length runs past the payload */
	struct core_wbuf bad = {0};
	core_w_u32(&bad, 1000);
	core_w_bytes(&bad, "abc", 3);
	struct core_rbuf rb = {.p = bad.p, .len = bad.len};
	is_str(core_r_str(&rb), "", "truncated string reads as empty");
	ok(rb.err, "truncated string sets err");

	/* a string without its NUL */
	struct core_wbuf nonul = {0};
	core_w_u32(&nonul, 2);
	core_w_bytes(&nonul, "abc", 3);
	struct core_rbuf rn = {.p = nonul.p, .len = nonul.len};
	core_r_str(&rn);
	ok(rn.err, "string without terminator is rejected");

	core_w_free(&w);
	core_w_free(&bad);
	core_w_free(&nonul);
	return done_testing();
}
