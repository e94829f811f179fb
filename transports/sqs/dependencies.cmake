# SPDX-License-Identifier: MIT
# Finds libcurl 7.88 (Debian libcurl4-openssl-dev: CURL::libcurl) and OpenSSL 3's libcrypto
# (Debian libssl-dev: OpenSSL::Crypto, the SigV4 signer's SHA-256 and HMAC). Included by
# babelqueue_add_transport() in the build and by babelqueueConfig.cmake for consumers of an
# installed package (a static babelqueue::sqs exports its PRIVATE drivers as link-only
# dependencies).
if(NOT TARGET CURL::libcurl)
  find_package(CURL QUIET)
endif()
if(NOT TARGET OpenSSL::Crypto)
  find_package(OpenSSL QUIET)
endif()
