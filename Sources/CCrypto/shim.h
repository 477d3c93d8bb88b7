#ifndef POMODORO_CCRYPTO_SHIM_H
#define POMODORO_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#endif
