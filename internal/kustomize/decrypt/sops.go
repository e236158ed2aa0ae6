package decrypt

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	"github.com/getsops/sops/v3/config"
	"github.com/getsops/sops/v3/stores/dotenv"
	"github.com/getsops/sops/v3/stores/ini"
	sopsjson "github.com/getsops/sops/v3/stores/json"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"

	"github.com/weir-gitops/weir/internal/kustomize/sopsformat"
)

// Formats of SOPS documents (internal/kustomize/sopsformat), named as kustomize's
// Decryptor interface names them.
const (
	FormatBinary = sopsformat.Binary
	FormatDotenv = sopsformat.Dotenv
	FormatINI    = sopsformat.INI
	FormatJSON   = sopsformat.JSON
	FormatYAML   = sopsformat.YAML
)

// MaxDocumentSize bounds an encrypted document, file or value, as Flux
// bounds encrypted files (5 MiB).
const MaxDocumentSize = 5 << 20

// FormatForPath is the SOPS format of a file or Secret key by its
// extension; see sopsformat.ForPath.
func FormatForPath(p string) string { return sopsformat.ForPath(p) }

// markers are the byte strings by which Flux recognizes a SOPS document of
// each format inside a Secret value; binary documents are a JSON envelope.
// Checked in this order, so the result is deterministic.
var markers = []struct {
	format string
	marker []byte
}{
	{FormatJSON, []byte(`"mac": "ENC[`)},
	{FormatYAML, []byte("mac: ENC[")},
	{FormatDotenv, []byte("sops_mac=ENC[")},
	{FormatINI, []byte("[sops]")},
}

// detectFormat reports the format of a SOPS document by its marker,
// preferring hint when its marker is present; ok is false when data is no
// SOPS document. A binary hint reads the JSON envelope.
func detectFormat(data []byte, hint string) (string, bool) {
	if hint == FormatBinary && bytes.Contains(data, markers[0].marker) {
		return FormatBinary, true
	}
	for _, m := range markers {
		if m.format == hint && bytes.Contains(data, m.marker) {
			return hint, true
		}
	}
	for _, m := range markers {
		if bytes.Contains(data, m.marker) {
			return m.format, true
		}
	}
	return "", false
}

func storeFor(format string) (sops.Store, error) {
	switch format {
	case FormatYAML:
		return sopsyaml.NewStore(&config.YAMLStoreConfig{}), nil
	case FormatJSON:
		return sopsjson.NewStore(&config.JSONStoreConfig{Indent: -1}), nil
	case FormatBinary:
		return sopsjson.NewBinaryStore(&config.JSONBinaryStoreConfig{Indent: -1}), nil
	case FormatDotenv:
		return dotenv.NewStore(&config.DotenvStoreConfig{}), nil
	case FormatINI:
		return ini.NewStore(&config.INIStoreConfig{}), nil
	}
	return nil, fmt.Errorf("unknown SOPS format %q", format)
}

// Decrypt decrypts a SOPS document of the given format (Format*) and
// returns it in the same format, verifying its MAC. It is the primitive
// for documents that arrive as SOPS wrote them.
func (d *Decryptor) Decrypt(data []byte, format string) ([]byte, error) {
	return d.decrypt(data, format, format, true)
}

// DecryptFile decrypts a file a build reads, given its path relative to
// the source root (for no purpose but symmetry with the caller's messages:
// errors do not repeat it) and its format. It implements the file half of
// internal/kustomize's Decryptor interface.
func (d *Decryptor) DecryptFile(_ string, format string, data []byte) ([]byte, error) {
	return d.decrypt(data, format, format, true)
}

// decrypt is the one path to SOPS. Its errors are this package's own:
// SOPS's messages can quote values, decrypted or not.
func (d *Decryptor) decrypt(data []byte, inFormat, outFormat string, verifyMAC bool) (out []byte, err error) {
	defer func() {
		// Malformed input has made SOPS panic before (Flux recovers too);
		// the panic value may hold content, so it is not repeated.
		if r := recover(); r != nil {
			out, err = nil, failed(fmt.Sprintf("SOPS failed on this %s document", inFormat))
		}
	}()
	if len(data) > MaxDocumentSize {
		return nil, failed(fmt.Sprintf("document of %d bytes exceeds the %d bytes limit", len(data), MaxDocumentSize))
	}
	in, err := storeFor(inFormat)
	if err != nil {
		return nil, failed(err.Error())
	}
	emit, err := storeFor(outFormat)
	if err != nil {
		return nil, failed(err.Error())
	}
	tree, err := in.LoadEncryptedFile(data)
	if err != nil {
		if errors.Is(err, sops.MetadataNotFound) {
			return nil, failed(fmt.Sprintf("not a SOPS %s document: sops metadata not found", inFormat))
		}
		return nil, failed(fmt.Sprintf("not a valid SOPS %s document", inFormat))
	}
	svcs, rec := d.clients()
	key, err := tree.Metadata.GetDataKeyWithKeyServices(svcs, sops.DefaultDecryptionOrder)
	if err != nil {
		return nil, rec.dataKeyError()
	}
	cipher := aes.NewCipher()
	mac, err := tree.Decrypt(key, cipher)
	if err != nil {
		return nil, failed("cannot decrypt the values: a ciphertext was altered, moved, or not encrypted with this document's data key")
	}
	if verifyMAC {
		stored, err := cipher.Decrypt(tree.Metadata.MessageAuthenticationCode, key, tree.Metadata.LastModified.Format(time.RFC3339))
		if err != nil {
			return nil, failedWith(ErrMACMismatch, "MAC mismatch: the stored MAC cannot be decrypted")
		}
		if s, ok := stored.(string); !ok || s != mac {
			return nil, failedWith(ErrMACMismatch, "MAC mismatch: the document was modified after it was encrypted")
		}
	}
	out, err = emit.EmitPlainFile(tree.Branches)
	if err != nil {
		return nil, failed(fmt.Sprintf("cannot render the decrypted %s document as %s", inFormat, outFormat))
	}
	return out, nil
}
