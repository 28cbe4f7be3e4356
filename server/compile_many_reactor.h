#ifndef ORDO_SERVER_COMPILE_MANY_REACTOR_H_
#define ORDO_SERVER_COMPILE_MANY_REACTOR_H_

#include "grpcpp/support/server_callback.h"
#include "ordo/v1/compiler_service.pb.h"
#include "rpc/service_call.h"

namespace ordo::server {

class CompilerService;

// Serves one CompileMany call: reads candidates, runs each through
// CompilerService::RunCompile on the work queue (so a candidate is answered
// exactly as a Compile call would be), writes each result with its id as it
// finishes.
//
// Flow: one read in flight while the candidates running and the results
// not yet written are fewer than `max_in_flight` (a client that stops
// reading stops the reading of its candidates); a finished candidate
// queues its result, and a written result lets the next read start.
// The callback API allows one write at a time: results wait in a queue and
// OnWriteDone starts the next. Finish comes once, when the client has
// half-closed, no candidate runs and every result is written; a cancelled
// call stops reading, its candidates see the cancel flag and end, and the
// call finishes when the last of them has. Owns itself (deleted in OnDone).
grpc::ServerBidiReactor<v1::CompileManyRequest, v1::CompileManyResponse>* NewCompileManyReactor(
    CompilerService* service, grpc::CallbackServerContext* context, rpc::CallEnvironment env,
    int max_in_flight);

}  // namespace ordo::server

#endif  // ORDO_SERVER_COMPILE_MANY_REACTOR_H_
