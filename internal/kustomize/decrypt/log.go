package decrypt

import (
	"io"

	"github.com/getsops/sops/v3/logging"
)

// SOPS logs through package-level logrus loggers written straight to
// stderr, outside the caller's logger, and one of its warnings quotes a
// document comment it could not decrypt, which may be plaintext. Everything
// this package needs from SOPS comes back as values, so its loggers are
// silenced once, for the process (nothing else in weir uses SOPS).
func init() {
	for _, l := range logging.Loggers {
		l.SetOutput(io.Discard)
	}
}
