#ifndef ORDO_RPC_TERMINATION_SIGNALS_H_
#define ORDO_RPC_TERMINATION_SIGNALS_H_

namespace ordo::rpc {

// Graceful shutdown for service mains without async-signal-unsafe handlers:
// BlockTerminationSignals() first thing in main (before any thread starts,
// so every thread inherits the mask), then WaitForTerminationSignal() on the
// main thread once the service runs; it returns the signal (SIGTERM or
// SIGINT) and the main thread shuts the service down.
void BlockTerminationSignals();
int WaitForTerminationSignal();

}  // namespace ordo::rpc

#endif  // ORDO_RPC_TERMINATION_SIGNALS_H_
