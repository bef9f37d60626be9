/*
  porttest.cpp - created 30.08.2003 by Holger Sattel <hsattel@rumms.uni-mannheim.de>
                 University of Mannheim, Department of Computer Engineering, Computer Architecture Group
*/

/* header include */
#include "atollrun.h"

/* ============================================================================ */
/* | Routine: main()                                                          | */
/* ============================================================================ */
int main(int pArgc, char *pArgv[])
{
  try {
    // get reference to Atollrun singleton
    Atollrun &atollrun = Atollrun::getReference();
    // don't establish connections to peerst
    atollrun.setEstablishConnectionsOnInit(false);
    // disable self-test
    atollrun.setPerformConnectionTestOnInit(false);
    // enable acquire port on single flag
    atollrun.setAcquirePortOnSingle(true);
    // initialize the network
    atollrun.Init(&pArgc, &pArgv);
    // printout informations about all peers
    std::cout << "#Processes      = " << atollrun.getCommSize() << std::endl; 
    // printout list of ports
    for(int lID = 0; lID < atollrun.getCommSize(); lID++) {
      // printout informations about current peer
      std::cout << "Atollrun ID " << lID << " --> ATOLL Port = " << atollrun.getPort(lID);
      // check if current ID is me
      if(lID == atollrun.getCommRank()) std::cout << " <-- thats me :-)";
      // newline
      std::cout << std::endl;
    }
    // catch exceptions
  } catch(AtollrunException &e) {
    std::cout << "Exception: " << e.what() << std::endl;        
  }
}
