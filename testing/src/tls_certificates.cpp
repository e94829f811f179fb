// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
#include <babelqueue/testing/broker_process.hpp>
#include <babelqueue/testing/command.hpp>
#include <babelqueue/testing/tls_certificates.hpp>

#include <filesystem>
#include <stdexcept>
#include <vector>

namespace babelqueue::testing {

void make_test_certificates(const std::string& openssl, const std::string& dir) {
  const std::string& d = dir;
  std::filesystem::create_directories(d);
  // Our own config: the system one may add extensions (and -addext would then duplicate them).
  write_file(
      d + "/openssl.cnf",
      "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n"
      "[ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n"
      "subjectKeyIdentifier = hash\n"
      "[server]\nbasicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature\n"
      "extendedKeyUsage = serverAuth\nsubjectAltName = DNS:localhost,IP:127.0.0.1\n"
      "subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n");
  const auto run = [&openssl, &d](std::vector<std::string> args) {
    args.insert(args.begin(), openssl);
    const CommandResult result = run_command(args, {{"OPENSSL_CONF", d + "/openssl.cnf"}});
    if (result.exit_code != 0) {
      throw std::runtime_error("openssl " + args.at(1) + " failed (exit " +
                               std::to_string(result.exit_code) + "): " + result.output);
    }
  };
  const auto self_signed_ca = [&run, &d](const std::string& name, const std::string& cn) {
    run({"req", "-x509", "-config", d + "/openssl.cnf", "-extensions", "ca", "-newkey", "ec",
         "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc", "-keyout", d + "/" + name + ".key",
         "-out", d + "/" + name + ".pem", "-days", "3650", "-subj", "/CN=" + cn});
  };
  self_signed_ca("ca", "babelqueue test CA");
  self_signed_ca("wrong-ca", "babelqueue unrelated test CA");
  run({"req", "-new", "-config", d + "/openssl.cnf", "-newkey", "ec", "-pkeyopt",
       "ec_paramgen_curve:P-256", "-noenc", "-keyout", d + "/server.key", "-out", d + "/server.csr",
       "-subj", "/CN=localhost"});
  run({"x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key",
       "-set_serial", "2", "-days", "3650", "-extfile", d + "/openssl.cnf", "-extensions", "server",
       "-out", d + "/server.pem"});
}

}  // namespace babelqueue::testing
