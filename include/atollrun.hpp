/* include/atollrun.hpp: a thin header-only C++ class over libatollrun (include/atollrun.h):
 * the same calls as methods; failures throw AtollrunException with the library's reason.
 * Link with -latollrun as for C. One Atollrun object per process. */
#ifndef ATOLLRUN_HPP
#define ATOLLRUN_HPP

#include "atollrun.h"

#include <stdexcept>
#include <string>

class AtollrunException : public std::runtime_error {
public:
	explicit AtollrunException(const std::string &what) : std::runtime_error(what) {}
};

class Atollrun {
public:
	/* Settings first, then init(). */
	Atollrun() {}
	/* Init at once with the default settings. */
	Atollrun(int &argc, char **&argv) { init(argc, argv); }
	~Atollrun()
	{
		if (inited_)
			Atollrun_Finalize();
	}
	Atollrun(const Atollrun &) = delete;
	Atollrun &operator=(const Atollrun &) = delete;

	void setEstablishConnectionsOnInit(bool on) { Atollrun_setEstablishConnectionsOnInit(on); }
	void setPerformConnectionTestOnInit(bool on) { Atollrun_setPerformConnectionTestOnInit(on); }
	void setAcquirePortOnSingle(bool on) { Atollrun_setAcquirePortOnSingle(on); }

	/* Run the init protocol; throws AtollrunException on failure. */
	void init(int &argc, char **&argv)
	{
		if (Atollrun_Init(&argc, &argv) == ATOLLRUN_INIT_ERROR)
			throw AtollrunException(std::string("Atollrun init: ") +
			                        Atollrun_getErrorString());
		inited_ = true;
	}

	int getNumberOfProcesses() const { return Atollrun_getNumberOfProcesses(); }
	int getMyId() const { return Atollrun_getMyId(); }
	/* The port of ID id; throws for an ID out of range. */
	atollport_t getPort(int id) const
	{
		check(id);
		return Atollrun_getPort(id);
	}
	/* The connected socket to ID id (-1 for one's own); throws for an ID out of range. */
	atollhandle_t getHandle(int id) const
	{
		check(id);
		return Atollrun_getHandle(id);
	}
	/* "a.b.c.d:port"; throws when port is no endpoint. */
	static std::string decodePort(atollport_t port)
	{
		char buf[32];
		if (Atollrun_decodePort(port, buf, sizeof buf) < 0)
			throw AtollrunException("not an Atollrun port: " + std::to_string(port));
		return buf;
	}

private:
	void check(int id) const
	{
		if (!inited_ || id < 0 || id >= getNumberOfProcesses())
			throw AtollrunException("no Atollrun process with ID " + std::to_string(id));
	}
	bool inited_ = false;
};

#endif
