/*
  porttest_c.c - created 02.02.2004 by Holger Sattel <hsattel@rumms.uni-mannheim.de>
                 University of Mannheim, Department of Computer Engineering, Computer Architecture Group
*/

/* header include */
#include "atollrun.h"

/* printf */
#include <stdio.h>

/* ============================================================================ */
/* | Routine: main()                                                          | */
/* ============================================================================ */
int main(int pArgc, char *pArgv[])
{
  /* some local variables */
  int result, ID;

  /* don't establish connections to peerst */
  Atollrun_setEstablishConnectionsOnInit(0);
  /* disable self-test */
  Atollrun_setPerformConnectionTestOnInit(0);
  /* enable acquire port on single flag */
  Atollrun_setAcquirePortOnSingle(1);

  /* initialize the network */
  result = Atollrun_Init(&pArgc, &pArgv);
  /* check the result and exit on error */
  if(result == ATOLLRUN_INIT_ERROR) return 1;

  /* printout informations about all peers */
  printf("#Processes      = %i\n", Atollrun_getCommSize());
  /* printout list of ports */
  for(ID = 0; ID < Atollrun_getCommSize(); ID++) {
    /* printout informations about current peer */
    printf("Atollrun ID %i --> ATOLL Port = %i", ID,  (int)ATOLLPORT(ID));
    /* check if current ID is me */
    if(ID == Atollrun_getCommRank()) printf(" <-- thats me :-)");
    /* newline */
    printf("\n");
  }

  /* return from function */
  return 0;
}
