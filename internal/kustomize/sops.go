package kustomize

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// EncryptedContent lists what FindSOPSEncrypted found, by name only: the
// content itself is never copied out.
type EncryptedContent struct {
	// Objects are the ids (Kind/namespace/name) of built objects carrying
	// SOPS metadata or ciphertext.
	Objects []string
	// Files are source files, relative to the root, that the build read
	// and that are SOPS documents.
	Files []string
}

// Empty reports whether nothing encrypted was found.
func (e *EncryptedContent) Empty() bool { return len(e.Objects) == 0 && len(e.Files) == 0 }

// sopsCiphertext is the prefix SOPS gives every encrypted value.
const sopsCiphertext = "ENC[AES256_GCM,"

// FindSOPSEncrypted reports built objects and read source files that hold
// SOPS-encrypted content. Build already refuses ciphertext in its output
// (see Decryption in doc.go) with the same object test; this is for
// callers that want the whole list, such as a CLI explaining a build. After
// a build with a Decryptor, files still read as encrypted: they are
// decrypted in memory, never on disk.
//
// An object is reported when it carries a top-level sops stanza, when a
// value of data, stringData or binaryData is itself a SOPS document (Secret
// and binaryData values are base64-decoded first), or when any string in it
// holds a SOPS ciphertext value. A file is reported when it is a SOPS
// document in any of SOPS's formats: YAML or JSON with a sops key holding
// mac or lastmodified, dotenv with sops_mac or sops_lastmodified, INI with
// a [sops] section, or any ciphertext value. Files catch what a build step
// may have dropped, such as a secretGenerator reading an encrypted env file.
//
// files are paths relative to root, usually Result.Files; they are read
// through the same confinement as the build.
func FindSOPSEncrypted(root string, objects []*unstructured.Unstructured, files []string) (*EncryptedContent, error) {
	found := &EncryptedContent{}
	for _, obj := range objects {
		if objectEncrypted(obj) {
			found.Objects = append(found.Objects, ObjectID(obj))
		}
	}
	if len(files) > 0 {
		cfs, err := newConfinedFS(root, nil, false)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if _, err := cleanSpecPath(f); err != nil {
				return nil, err
			}
			data, err := cfs.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", f, err)
			}
			if isSOPSDocument(data) {
				found.Files = append(found.Files, f)
			}
		}
		sort.Strings(found.Files)
	}
	return found, nil
}

func objectEncrypted(obj *unstructured.Unstructured) bool {
	if stanza, ok := obj.Object["sops"].(map[string]any); ok && len(stanza) > 0 {
		return true
	}
	secret := obj.GetKind() == "Secret" && obj.GetAPIVersion() == "v1"
	for _, field := range []string{"data", "stringData", "binaryData"} {
		values, ok := obj.Object[field].(map[string]any)
		if !ok {
			continue
		}
		decode := field == "binaryData" || (secret && field == "data")
		for _, v := range values {
			s, ok := v.(string)
			if !ok {
				continue
			}
			content := []byte(s)
			if decode {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil {
					content = b
				}
			}
			if isSOPSDocument(content) {
				return true
			}
		}
	}
	return containsCiphertext(obj.Object)
}

func containsCiphertext(v any) bool {
	switch t := v.(type) {
	case string:
		return strings.Contains(t, sopsCiphertext)
	case map[string]any:
		for _, e := range t {
			if containsCiphertext(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if containsCiphertext(e) {
				return true
			}
		}
	}
	return false
}

// isSOPSDocument recognizes SOPS output in any of its formats.
func isSOPSDocument(data []byte) bool {
	if bytes.Contains(data, []byte(sopsCiphertext)) {
		return true
	}
	if !bytes.Contains(data, []byte("sops")) {
		return false
	}
	return hasSOPSTextMarkers(data) || hasSOPSStanza(data)
}

// hasSOPSTextMarkers finds the metadata SOPS writes into dotenv files
// (sops_mac=, sops_lastmodified=) and INI files (a [sops] section with mac
// or lastmodified).
func hasSOPSTextMarkers(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	inSOPSSection := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "sops_mac=") || strings.HasPrefix(line, "sops_lastmodified=") {
			return true
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			inSOPSSection = strings.TrimSpace(line[1:len(line)-1]) == "sops"
			continue
		}
		if inSOPSSection {
			key, _, ok := strings.Cut(line, "=")
			if k := strings.TrimSpace(key); ok && (k == "mac" || k == "lastmodified") {
				return true
			}
		}
	}
	return false
}

// hasSOPSStanza finds a top-level sops mapping with mac or lastmodified in
// any document of a YAML or JSON stream.
func hasSOPSStanza(data []byte) bool {
	for _, doc := range splitYAMLDocuments(data) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			continue
		}
		stanza, ok := m["sops"].(map[string]any)
		if !ok {
			continue
		}
		if _, ok := stanza["mac"]; ok {
			return true
		}
		if _, ok := stanza["lastmodified"]; ok {
			return true
		}
	}
	return false
}

// splitYAMLDocuments splits a stream at lines that are exactly "---"
// (trailing blanks allowed).
func splitYAMLDocuments(data []byte) [][]byte {
	var docs [][]byte
	start := 0
	for i := 0; i <= len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		lineEnd := len(data)
		if end >= 0 {
			lineEnd = i + end
		}
		line := bytes.TrimRight(data[i:lineEnd], " \t\r")
		if bytes.Equal(line, []byte("---")) {
			docs = append(docs, data[start:i])
			start = lineEnd + 1
		}
		if end < 0 {
			break
		}
		i = lineEnd + 1
	}
	if start < len(data) {
		docs = append(docs, data[start:])
	}
	return docs
}
