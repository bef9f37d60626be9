/* include/atollrun.hpp: the C++ interface of the Atollrun paper's chapter 3, header-only over
 * libatollrun's C functions (link -latollrun as for C). Programs include "atollrun.h", which
 * includes this under C++: one instance (Atollrun::getReference()), the three settings before
 * Init(), then the four get-methods; every failure throws AtollrunException, whose what() says
 * why. */
#ifndef ATOLLRUN_HPP
#define ATOLLRUN_HPP

#include "atollrun.h"

#include <exception>
#include <iostream> /* the paper's porttest.cpp prints with std::cout including only atollrun.h */
#include <string>

class AtollrunException : public std::exception {
public:
	explicit AtollrunException(const std::string &why) : why_(why) {}
	const char *what() const noexcept override { return why_.c_str(); }

private:
	std::string why_;
};

class Atollrun {
public:
	/* The single instance. */
	static Atollrun &getReference()
	{
		static Atollrun the;
		return the;
	}

	/* Settings, read by Init() (defaults as for the C functions: connections on, test off,
	 * no port for a single process). */
	void setEstablishConnectionsOnInit(bool on) { Atollrun_setEstablishConnectionsOnInit(on); }
	void setPerformConnectionTestOnInit(bool on) { Atollrun_setPerformConnectionTestOnInit(on); }
	void setAcquirePortOnSingle(bool on) { Atollrun_setAcquirePortOnSingle(on); }

	/* Run the init protocol with the starter; throws AtollrunException on failure. */
	void Init(int *argc, char ***argv)
	{
		if (Atollrun_Init(argc, argv) == ATOLLRUN_INIT_ERROR)
			throw AtollrunException(std::string("Atollrun::Init: ") +
			                        Atollrun_getErrorString());
	}

	/* This process's ID and the number of processes; throw before a successful Init(). */
	int getCommRank() const
	{
		inited();
		return Atollrun_getCommRank();
	}
	int getCommSize() const
	{
		inited();
		return Atollrun_getCommSize();
	}
	/* The port of ID id (ATOLLRUN_NO_PORT: it acquired none); throws for an ID out of range. */
	atollport_t getPort(int id) const
	{
		check(id);
		return Atollrun_getPort(id);
	}
	/* The connected socket to ID id (-1 for one's own, or without connections); throws for
	 * an ID out of range. */
	atollhandle_t getHandle(int id) const
	{
		check(id);
		return Atollrun_getHandle(id);
	}

	/* lamkit's extension: "a.b.c.d:port" of a port; throws when port is no endpoint. */
	static std::string decodePort(atollport_t port)
	{
		char buf[32];
		if (Atollrun_decodePort(port, buf, sizeof buf) < 0)
			throw AtollrunException("not an Atollrun port: " + std::to_string(port));
		return buf;
	}

	Atollrun(const Atollrun &) = delete;
	Atollrun &operator=(const Atollrun &) = delete;

private:
	Atollrun() {}
	~Atollrun() { Atollrun_Finalize(); }
	void inited() const
	{
		if (!Atollrun_isInitialized())
			throw AtollrunException("Atollrun: Init() has not succeeded");
	}
	void check(int id) const
	{
		inited();
		if (id < 0 || id >= Atollrun_getCommSize())
			throw AtollrunException("no Atollrun process with ID " + std::to_string(id));
	}
};

#endif
