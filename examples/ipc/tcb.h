// tcb.h - selects the thread control block implementation at compile time.
//
//   -DTCB_HEADER='"file.h"'  use another implementation of class tcb (e.g. the
//                            output of a flattening or reordering tool)
//   -DTCB_VARIANT_MIXIN      the mix-in class hierarchy (tcb_mixin.h)
//   (default)                the hand-tuned flat class (tcb_flat.h)
#pragma once

#if defined(TCB_HEADER)
#include TCB_HEADER
#ifndef TCB_VARIANT_NAME
#define TCB_VARIANT_NAME "custom"
#endif
#elif defined(TCB_VARIANT_MIXIN)
#include "tcb_mixin.h"
#define TCB_VARIANT_NAME "mixin"
#else
#include "tcb_flat.h"
#define TCB_VARIANT_NAME "flat"
#endif
