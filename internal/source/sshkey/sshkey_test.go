package sshkey

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/ssh"
)

func TestGenerate(t *testing.T) {
	tests := []struct {
		opts    Options
		keyType string
		wantErr string
	}{
		{opts: DefaultOptions(), keyType: "ecdsa-sha2-nistp384"},
		{opts: Options{Algorithm: "ecdsa", Curve: "p256"}, keyType: "ecdsa-sha2-nistp256"},
		{opts: Options{Algorithm: "ecdsa", Curve: "p521"}, keyType: "ecdsa-sha2-nistp521"},
		{opts: Options{Algorithm: "rsa", RSABits: 1024}, keyType: "ssh-rsa"},
		{opts: Options{Algorithm: "ed25519"}, keyType: "ssh-ed25519"},
		{opts: Options{Algorithm: "rsa", RSABits: 1000}, wantErr: "multiple of 8"},
		{opts: Options{Algorithm: "ecdsa", Curve: "p224"}, wantErr: `curve "p224"`},
		{opts: Options{Algorithm: "dsa"}, wantErr: `algorithm "dsa"`},
	}
	for _, tc := range tests {
		kp, err := Generate(tc.opts)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%+v: error %v, want one containing %q", tc.opts, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", tc.opts, err)
		}
		signer, err := ssh.ParsePrivateKey(kp.PrivateKeyPEM)
		if err != nil {
			t.Fatalf("%+v: private key does not parse: %v", tc.opts, err)
		}
		pub, _, _, _, err := ssh.ParseAuthorizedKey(kp.AuthorizedKey)
		if err != nil {
			t.Fatalf("%+v: public key does not parse: %v", tc.opts, err)
		}
		if pub.Type() != tc.keyType || string(pub.Marshal()) != string(signer.PublicKey().Marshal()) {
			t.Errorf("%+v: public key %s does not match the private key (%s)", tc.opts, pub.Type(), signer.PublicKey().Type())
		}
	}
}

func TestBindFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    Options
		wantErr string
	}{
		{args: nil, want: DefaultOptions()},
		{args: []string{"--ssh-key-algorithm=rsa", "--ssh-rsa-bits=4096"}, want: Options{"rsa", 4096, "p384"}},
		{args: []string{"--ssh-ecdsa-curve=p521"}, want: Options{"ecdsa", 2048, "p521"}},
		{args: []string{"--ssh-key-algorithm=dsa"}, wantErr: "must be one of: rsa, ecdsa, ed25519"},
		{args: []string{"--ssh-rsa-bits=1023"}, wantErr: "multiple of 8"},
	}
	for _, tc := range tests {
		o := DefaultOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.BindFlags(fs)
		err := fs.Parse(tc.args)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || o != tc.want {
			t.Errorf("%v: got %+v, %v; want %+v", tc.args, o, err, tc.want)
		}
	}
}
