package decrypt

import "errors"

// Sentinels callers can test with errors.Is.
var (
	// ErrDecryptionFailed marks every failure to decrypt a document, file
	// or object. It is not terminal: the decryption Secret may change.
	ErrDecryptionFailed = errors.New("SOPS decryption failed")
	// ErrNoMatchingKey marks a document none of whose recipients the
	// decryption keys can open. It always comes with ErrDecryptionFailed.
	ErrNoMatchingKey = errors.New("no decryption key matches")
	// ErrMACMismatch marks a document whose values no longer match the MAC
	// SOPS recorded: it was edited after encryption. It always comes with
	// ErrDecryptionFailed.
	ErrMACMismatch = errors.New("MAC mismatch")
	// ErrInvalidKey marks a decryption Secret entry that cannot be used.
	ErrInvalidKey = errors.New("invalid decryption key")
)

// failure builds an error wrapping ErrDecryptionFailed and, when set, a
// more precise cause. msg must never hold plaintext or key material.
type failure struct {
	msg   string
	cause error
}

func (e *failure) Error() string { return e.msg }

func (e *failure) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrDecryptionFailed, e.cause}
	}
	return []error{ErrDecryptionFailed}
}

func failed(msg string) error { return &failure{msg: msg} }

func failedWith(cause error, msg string) error { return &failure{msg: msg, cause: cause} }
