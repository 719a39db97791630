/* Forwarding header: gm2gm/aclshmemi_device_cc.h, the name of gm2gm/shmemi_device_cc.h in earlier
   releases of the original. */
#include "shmemi_device_cc.h"
