// Package testpostgres starts a throwaway PostgreSQL server for tests:
// initdb and postgres from the host's installation (Debian's postgresql
// package) in a temporary directory, on a free port, trust auth, fsync off.
// Run as root, the server runs as the postgres user (it refuses root).
package testpostgres

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// Server is a running throwaway server.
type Server struct {
	dir  string
	cmd  *exec.Cmd
	port int
	log  string
	// exited receives the server's exit once.
	exited chan error
}

// Find returns the directory of initdb and postgres, or an error saying
// how to install them.
func Find() (string, error) {
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(matches) > 0 {
		return filepath.Dir(matches[len(matches)-1]), nil
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (Debian: apt-get install postgresql; .ci/run installs it)")
}

// Start initialises a cluster and starts its server.
func Start() (*Server, error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gcjitter-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, log: filepath.Join(dir, "server.log")}
	var wrap []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root needs the postgres user to run the server: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		wrap = []string{"runuser", "-u", "postgres", "--"}
	}
	command := func(name string, args ...string) *exec.Cmd {
		argv := append(append(wrap[:len(wrap):len(wrap)], filepath.Join(bin, name)), args...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	data := filepath.Join(dir, "data")
	if out, err := command("initdb", "-D", data, "-U", "gcjitter", "--auth=trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	for try := 0; try < 5; try++ {
		s.port, err = freePort()
		if err != nil {
			break
		}
		logf, err := os.Create(s.log)
		if err != nil {
			break
		}
		s.cmd = command("postgres", "-D", data, "-p", strconv.Itoa(s.port), "-k", dir,
			"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
		s.cmd.Stdout, s.cmd.Stderr = logf, logf
		if err = s.cmd.Start(); err != nil {
			logf.Close()
			break
		}
		s.exited = make(chan error, 1)
		go func() { s.exited <- s.cmd.Wait(); logf.Close() }()
		if err = s.waitReady(s.exited); err == nil {
			return s, nil
		}
		s.kill()
		<-s.exited
	}
	log, _ := os.ReadFile(s.log)
	os.RemoveAll(dir)
	return nil, fmt.Errorf("starting postgres: %v\n%s", err, log)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) waitReady(exited <-chan error) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("postgres exited: %v", err)
		default:
		}
		db, err := sql.Open("pgx", s.DSN("postgres"))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err = db.PingContext(ctx)
			cancel()
			db.Close()
			if err == nil {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("postgres not ready after 60 s")
}

// DSN is a URL for database name on the server.
func (s *Server) DSN(name string) string {
	return fmt.Sprintf("postgres://gcjitter@127.0.0.1:%d/%s?sslmode=disable", s.port, name)
}

// NewDatabase creates an empty database and returns its URL.
func (s *Server) NewDatabase(name string) (string, error) {
	db, err := sql.Open("pgx", s.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		return "", fmt.Errorf("creating database %s: %v", name, err)
	}
	return s.DSN(name), nil
}

func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Stop stops the server (fast shutdown, then a kill) and removes its files.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			s.kill()
			<-s.exited
		}
	}
	os.RemoveAll(s.dir)
}
