// examples/atollrun/porttest.cc: the porttest example with the C++ class: Init (with the
// connection test when --test), then every ID sends ID 0 a line of what it sees over its
// handle; ID 0 prints them. Build: c++ porttest.cc -I<lamkit>/include -L<lamkit>/lib -latollrun
#include "atollrun.h"

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <unistd.h>

static void send_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t r = write(fd, p, len);
		if (r <= 0)
			throw AtollrunException("write to ID 0 failed");
		p += r;
		len -= static_cast<size_t>(r);
	}
}

int main(int argc, char **argv)
{
	Atollrun &atollrun = Atollrun::getReference();
	bool test = argc > 1 && !std::strcmp(argv[1], "--test");

	try {
		atollrun.setPerformConnectionTestOnInit(test);
		atollrun.setAcquirePortOnSingle(true); // so a single process has a port to print
		atollrun.Init(&argc, &argv);
		int n = atollrun.getCommSize(), me = atollrun.getCommRank();
		char line[128];
		std::snprintf(line, sizeof line, "ID %d of %d port %s\n", me, n,
		              Atollrun::decodePort(atollrun.getPort(me)).c_str());
		if (me != 0) {
			send_all(atollrun.getHandle(0), line, std::strlen(line));
			return 0;
		}
		std::cout << "porttest++: " << n << " process(es), connection test "
		          << (test ? "on" : "off") << "\n"
		          << line;
		for (int j = 1; j < n; j++) {
			std::string got;
			char c;
			while (read(atollrun.getHandle(j), &c, 1) == 1 && c != '\n')
				got += c;
			std::cout << got << "\n";
		}
		atollrun.getPort(n); // out of range: must throw
		std::cout << "porttest++: no exception for a bad ID\n";
		return 1;
	} catch (const AtollrunException &e) {
		if (Atollrun_getCommRank() == 0 && std::string(e.what()).find("no Atollrun process") == 0) {
			std::cout << "porttest++: OK (" << e.what() << ")\n";
			return 0;
		}
		std::cerr << "porttest++: " << e.what() << "\n";
		return 1;
	}
}
