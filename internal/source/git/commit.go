package git

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Signature is who made a commit or tag, and when.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

// Commit is the checked-out commit, with what verification and the
// artifact need.
type Commit struct {
	// Hash is the 40-character hex SHA-1.
	Hash string
	// Reference is the full reference that was checked out
	// (refs/heads/main, refs/tags/v1.2.3, refs/pull/1/head), empty for a
	// commit-only checkout.
	Reference string
	// Revision is the artifact revision in Flux's format, see Revision.
	Revision  string
	Author    Signature
	Committer Signature
	Message   string
	// Signature is the armored signature from the gpgsig header (PGP or
	// SSH), empty when the commit is unsigned.
	Signature []byte
	// Encoded is the commit object without its signature header: the
	// bytes the signature was made over.
	Encoded []byte
	// Tag is the annotated tag Reference names, nil for branches,
	// lightweight tags, other references and commits.
	Tag *Tag
}

// ShortMessage is the subject line, cut to 50 characters as Flux shows it
// in events.
func (c *Commit) ShortMessage() string {
	subject, _, _ := strings.Cut(c.Message, "\n")
	r := []rune(subject)
	if len(r) > 50 {
		return string(r[:47]) + "..."
	}
	return subject
}

// Tag is an annotated tag object.
type Tag struct {
	// Hash is the SHA-1 of the tag object itself.
	Hash string
	// Name is the tag's name without refs/tags/.
	Name string
	// Target is the SHA-1 of the commit the tag points at (peeled).
	Target  string
	Tagger  Signature
	Message string
	// Signature is the armored signature that ends the tag message, empty
	// when the tag is unsigned.
	Signature []byte
	// Encoded is the tag object without its signature.
	Encoded []byte
}

func newSignature(s object.Signature) Signature {
	return Signature{Name: s.Name, Email: s.Email, When: s.When}
}

func buildCommit(c *object.Commit) (*Commit, error) {
	encoded, err := encodeWithoutSignature(c.EncodeWithoutSignature)
	if err != nil {
		return nil, fmt.Errorf("encode commit %s: %w", c.Hash, err)
	}
	return &Commit{
		Hash:      c.Hash.String(),
		Author:    newSignature(c.Author),
		Committer: newSignature(c.Committer),
		Message:   c.Message,
		Signature: []byte(c.PGPSignature),
		Encoded:   encoded,
	}, nil
}

func buildTag(t *object.Tag, target plumbing.Hash) (*Tag, error) {
	encoded, err := encodeWithoutSignature(t.EncodeWithoutSignature)
	if err != nil {
		return nil, fmt.Errorf("encode tag %s: %w", t.Name, err)
	}
	return &Tag{
		Hash:      t.Hash.String(),
		Name:      t.Name,
		Target:    target.String(),
		Tagger:    newSignature(t.Tagger),
		Message:   t.Message,
		Signature: []byte(t.PGPSignature),
		Encoded:   encoded,
	}, nil
}

func encodeWithoutSignature(encode func(plumbing.EncodedObject) error) ([]byte, error) {
	obj := &plumbing.MemoryObject{}
	if err := encode(obj); err != nil {
		return nil, err
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
