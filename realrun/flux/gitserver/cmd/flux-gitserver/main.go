// Command flux-gitserver serves the real run's tenant repositories over HTTPS on loopback
// (docs/real-run.md#flux), with git's own smart-HTTP server, git-http-backend, behind Go's CGI handler.
//
// The tenants' GitOps URLs must be https:// (components/model/tenant_file/apps.py), so the server
// makes a key and a self-signed certificate for 127.0.0.1 when it starts and writes the certificate
// where -cert-file says: the run hands it to source-controller as the tenant's `ca.crt`, as a team
// with a private Git host does. A repository listed in -auth-file answers only to its user and
// password (HTTP basic auth, as a Git host asks for the tenant's `git-credentials`); the others are
// readable anonymously. Nothing can be pushed: git-http-backend refuses receive-pack unless a
// repository enables it, and the run fills the repositories on disk. Each request is logged (method,
// path, user, status), so the log shows which controller fetched what.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// credentials: repository path (as in the URL, e.g. /genomics/platform-config.git) -> user, password.
type credentials map[string]struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func main() {
	root := flag.String("root", "", "folder holding the bare repositories, as their URL paths name them")
	addressFile := flag.String("address-file", "", "where to write host:port once listening")
	certFile := flag.String("cert-file", "", "where to write the server's certificate (PEM)")
	authFile := flag.String("auth-file", "", "JSON: repository path -> {user, password}")
	flag.Parse()
	if *root == "" || *addressFile == "" || *certFile == "" {
		log.Fatal("-root, -address-file and -cert-file are required")
	}
	auth := credentials{}
	if *authFile != "" {
		data, err := os.ReadFile(*authFile)
		if err != nil {
			log.Fatal(err)
		}
		if err := json.Unmarshal(data, &auth); err != nil {
			log.Fatalf("%s: %v", *authFile, err)
		}
	}
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		log.Fatalf("git --exec-path: %v (the server runs git's own git-http-backend)", err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + *root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	certificate, err := selfSigned(*certFile)
	if err != nil {
		log.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*addressFile, []byte(listener.Addr().String()), 0o644); err != nil {
		log.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		user := "-"
		defer func() { log.Printf("%s %s user=%s status=%d", r.Method, r.URL.Path, user, rec.status) }()
		for repository, want := range auth {
			if r.URL.Path != repository && !strings.HasPrefix(r.URL.Path, repository+"/") {
				continue
			}
			name, password, ok := r.BasicAuth()
			if !ok || name != want.User || password != want.Password {
				rec.Header().Set("WWW-Authenticate", `Basic realm="realrun"`)
				http.Error(rec, "authentication required", http.StatusUnauthorized)
				return
			}
			user = name
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			http.Error(rec, "read-only", http.StatusForbidden)
			return
		}
		backend.ServeHTTP(rec, r)
	})
	server := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{certificate}, MinVersion: tls.VersionTLS12},
	}
	log.Printf("serving %s on https://%s", *root, listener.Addr())
	log.Fatal(server.ServeTLS(listener, "", ""))
}

// selfSigned makes a P-256 key and a certificate for 127.0.0.1 that is its own CA, and writes the
// certificate (PEM) to path.
func selfSigned(path string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, err
	}
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "realrun git server"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(path, certPEM, 0o644); err != nil {
		return tls.Certificate{}, fmt.Errorf("writing %s: %w", path, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}
