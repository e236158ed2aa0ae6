package decrypt

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// IsEncryptedDocument reports whether obj is a whole SOPS document: a
// top-level sops stanza holding a mac, the test kustomize-controller uses.
func IsEncryptedDocument(obj *unstructured.Unstructured) bool {
	stanza, ok := obj.Object["sops"].(map[string]any)
	if !ok {
		return false
	}
	mac, ok := stanza["mac"].(string)
	return ok && mac != ""
}

// DecryptObject returns obj with its SOPS content decrypted, or obj itself
// when it holds none. obj is never modified. A whole SOPS document is
// decrypted as JSON and loses its sops stanza (its MAC is not verified, see
// doc.go); a Secret has each data and stringData value that is a SOPS
// document decrypted and emitted in the format its key names. It does not
// look at annotations: skipping objects marked decrypt: disabled is the
// caller's policy. Errors name the Secret key at fault (data["app.env"]),
// never a value.
//
// It implements the object half of internal/kustomize's Decryptor
// interface.
func (d *Decryptor) DecryptObject(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if IsEncryptedDocument(obj) {
		return d.decryptDocument(obj)
	}
	if obj.GetKind() == "Secret" {
		return d.decryptSecretValues(obj)
	}
	return obj, nil
}

func (d *Decryptor) decryptDocument(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	in, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, failed("cannot serialize the object for decryption")
	}
	out, err := d.decrypt(in, FormatJSON, FormatJSON, false)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(out, &m); err != nil {
		return nil, failed("the decrypted object is not a JSON object")
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func (d *Decryptor) decryptSecretValues(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured // copied on first change
	for _, field := range []string{"data", "stringData"} {
		values, ok := obj.Object[field].(map[string]any)
		if !ok {
			continue
		}
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the first failure is deterministic
		for _, key := range keys {
			s, ok := values[key].(string)
			if !ok {
				continue
			}
			content := []byte(s)
			if field == "data" {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					// Not base64: the API server will say so; it is
					// no SOPS document either way.
					continue
				}
				content = b
			}
			hint := FormatForPath(key)
			format, ok := detectFormat(content, hint)
			if !ok {
				continue
			}
			// A binary document is a JSON envelope, which detectFormat
			// reports as binary when the key names no other format.
			plain, err := d.decrypt(content, format, hint, true)
			if err != nil {
				return nil, fmt.Errorf("%s[%q]: %w", field, key, err)
			}
			if out == nil {
				out = obj.DeepCopy()
			}
			v := string(plain)
			if field == "data" {
				v = base64.StdEncoding.EncodeToString(plain)
			}
			if err := unstructured.SetNestedField(out.Object, v, field, key); err != nil {
				return nil, failed(fmt.Sprintf("%s[%q]: cannot set the decrypted value", field, key))
			}
		}
	}
	if out == nil {
		return obj, nil
	}
	return out, nil
}
