package storage

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Every connection to foya.db goes through walVFS ("foya-wal"), a thin
// layer over SQLite's "unix-excl" VFS that writes each commit's frames to
// the write-ahead log with one system call.
//
// unix-excl: the kernel owns its database, as it owns its data directory
// (kernel.lock). With SQLite's default VFS every transaction took and
// released its locks in the shared-memory index with fcntl — six calls
// for a single-event append, a fifth of its CPU. unix-excl takes one
// exclusive lock on the file when the first connection opens it, keeps
// the WAL index in the process's memory, and coordinates the kernel's
// connections (the writer, the readers, the checkpointer) in memory. The
// cost: no other process opens foya.db while the kernel runs (`sqlite3`
// reports it locked); a live backup is `foya backup FILE`.
//
// SQLite writes a frame of the write-ahead log as two writes, its 24-byte
// header and then its page, so a commit of five pages (a message event:
// the events row and its index, the messages row and its index, the
// session's head) was ten pwrite calls, a third of a single-event append's
// CPU on a virtual machine where a system call costs microseconds
// (BenchmarkAppendBatch/sqlite/batch=1). walVFS keeps the frames of a
// transaction in a buffer as SQLite writes them, back to back at the end
// of the log, and writes the buffer out when the commit frame's page has
// arrived — inside that frame's xWrite, so a failure (a full disk) fails
// the commit exactly as before, and before SQLite publishes the commit in
// the WAL index, so a reader never finds a frame that is not in the file.
// Anything else on the file (a read, a sync, a truncate, its size, a file
// control, a write elsewhere or of another shape: the log's header, a
// checksum rewrite) writes the buffer out first and then goes to SQLite's
// VFS unchanged. What SQLite writes is unchanged, byte for byte; only the
// number of calls is. TestWALVFS* check both. walVFS also syncs the log
// and the database file with fdatasync instead of fsync (syncData).
//
// The frame format (https://sqlite.org/fileformat2.html#walformat): a
// 32-byte log header, then frames of a 24-byte header and a page; bytes 4
// to 7 of a frame header are the database size in pages after a commit,
// and zero in every other frame.

const (
	walVFSName     = "foya-wal"
	walFrameHeader = 24
	// walBufferMax is the most walVFS writes at once: SQLite's unix VFS
	// writes at most 128 KiB - 1 bytes a call (seekAndWriteFd), and
	// reports a longer write as a full disk.
	walBufferMax = 1<<17 - 1
)

// walFile is walVFS's state of one open WAL file, kept in the bytes that
// follow SQLite's own file structure (SQLite allocates szOsFile bytes for
// each file it opens).
type walFile struct {
	buf uintptr // C memory (libc.Xmalloc), nil until the first frame
	cap int64
	len int64
	off int64 // file offset of buf's first byte
	// end is where the last write through this file ended (buffered or
	// not): a frame header written there is the next frame appended to
	// the log, anything written elsewhere (the log's header, a checksum
	// rewrite, a page overwritten in place) is not buffered.
	end int64
	// tail is the furthest any write reached since the log's header was
	// last written (at a restart of the log): only a frame that extends
	// the log past everything written before is buffered, so a write in
	// place — a page overwritten before its commit, a checksum rewrite, a
	// transaction rolled back and written over — never is.
	tail   int64
	page   int64 // the size of the last page buffered
	expect int32 // walExpectPage or walExpectCommitPage after a buffered frame header
}

const (
	walExpectHeader     = 0
	walExpectPage       = 1
	walExpectCommitPage = 2
)

var walVFS struct {
	once    sync.Once
	err     error
	base    uintptr // the unix VFS
	extOff  uintptr // offset of walFile in a file structure
	mu      sync.Mutex
	wal, db wrappedIO // the methods of the log and of the database file
	// walSyncs and dbSyncs count the fdatasync calls of syncData on logs
	// and database files (for tests).
	walSyncs, dbSyncs atomic.Int64
}

// wrappedIO are SQLite's methods of a kind of file (base) and walVFS's
// copy of them with its overrides (io: C memory, SQLite holds the
// pointer), made at the first open of such a file.
type wrappedIO struct {
	base, io uintptr
}

// registerWALVFS registers walVFS once (dsn calls it: every connection
// opens foya.db with ?vfs=foya-wal).
func registerWALVFS() error {
	walVFS.once.Do(func() { walVFS.err = doRegisterWALVFS() })
	return walVFS.err
}

func doRegisterWALVFS() error {
	tls := libc.NewTLS()
	defer tls.Close()
	excl, err := libc.CString("unix-excl")
	if err != nil {
		return fmt.Errorf("wal vfs name: %w", err)
	}
	base := sqlite3.Xsqlite3_vfs_find(tls, excl)
	libc.Xfree(tls, excl)
	if base == 0 {
		return fmt.Errorf("sqlite has no unix-excl VFS")
	}
	b := (*sqlite3.Tsqlite3_vfs)(cmem(base))
	name, err := libc.CString(walVFSName)
	if err != nil {
		return fmt.Errorf("wal vfs name: %w", err)
	}
	p := libc.Xmalloc(tls, libc.Tsize_t(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	if p == 0 {
		return fmt.Errorf("wal vfs: out of memory")
	}
	v := (*sqlite3.Tsqlite3_vfs)(cmem(p))
	*v = *b
	walVFS.base = base
	walVFS.extOff = (uintptr(b.FszOsFile) + 7) &^ 7
	v.FszOsFile = int32(walVFS.extOff + unsafe.Sizeof(walFile{}))
	v.FzName = name
	v.FpNext = 0
	v.FxOpen = cfunc(walOpen)
	if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("register wal vfs: sqlite error %d", rc)
	}
	return nil
}

// cmem is the address p of memory that SQLite's driver allocated outside
// Go's heap (its C heap, or a structure it handed to a VFS callback).
func cmem(p uintptr) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), p) }

// cfunc is f as SQLite's (modernc's) function pointer.
func cfunc[F any](f F) uintptr { return *(*uintptr)(unsafe.Pointer(&f)) }

func ext(pFile uintptr) *walFile { return (*walFile)(cmem(pFile + walVFS.extOff)) }

func methodsOf(pFile uintptr) uintptr { return (*sqlite3.Tsqlite3_file)(cmem(pFile)).FpMethods }

// baseIO are SQLite's methods of the log.
func baseIO() *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(cmem(walVFS.wal.base))
}

func walOpen(tls *libc.TLS, pVfs uintptr, zName uintptr, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	open := (*sqlite3.Tsqlite3_vfs)(cmem(walVFS.base)).FxOpen
	rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&open)))(tls, walVFS.base, zName, pFile, flags, pOutFlags)
	*ext(pFile) = walFile{}
	if rc != sqlite3.SQLITE_OK || methodsOf(pFile) == 0 {
		return rc
	}
	switch {
	case flags&sqlite3.SQLITE_OPEN_WAL != 0:
		wrapMethods(tls, pFile, &walVFS.wal, func(io *sqlite3.Tsqlite3_io_methods) {
			io.FxClose = cfunc(walClose)
			io.FxRead = cfunc(walRead)
			io.FxWrite = cfunc(walWrite)
			io.FxTruncate = cfunc(walTruncate)
			io.FxSync = cfunc(walSync)
			io.FxFileSize = cfunc(walFileSize)
			io.FxFileControl = cfunc(walFileControl)
			if io.FiVersion >= 3 {
				io.FxFetch = cfunc(walFetch)
			}
		})
	case flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0:
		wrapMethods(tls, pFile, &walVFS.db, func(io *sqlite3.Tsqlite3_io_methods) {
			io.FxSync = cfunc(dbSync)
		})
	}
	return rc
}

// wrapMethods gives pFile w's methods: the first time, SQLite's methods of
// pFile with override's changes (the log and the database file have
// different ones: unix-excl locks the database, not its log). A file with
// methods of another kind, never seen on unix, stays as it is.
func wrapMethods(tls *libc.TLS, pFile uintptr, w *wrappedIO, override func(*sqlite3.Tsqlite3_io_methods)) {
	m := methodsOf(pFile)
	walVFS.mu.Lock()
	if w.io == 0 {
		p := libc.Xmalloc(tls, libc.Tsize_t(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
		if p == 0 {
			walVFS.mu.Unlock()
			return // unwrapped: SQLite's VFS alone
		}
		io := (*sqlite3.Tsqlite3_io_methods)(cmem(p))
		*io = *(*sqlite3.Tsqlite3_io_methods)(cmem(m))
		override(io)
		w.base, w.io = m, p
	}
	same := w.base == m
	walVFS.mu.Unlock()
	if same {
		(*sqlite3.Tsqlite3_file)(cmem(pFile)).FpMethods = w.io
	}
}

// flush writes out the buffered frames of pFile.
func flush(tls *libc.TLS, pFile uintptr) int32 {
	f := ext(pFile)
	f.expect = walExpectHeader
	if f.len == 0 {
		return sqlite3.SQLITE_OK
	}
	n := f.len
	f.len = 0
	return baseWrite(tls, pFile, f.buf, int32(n), f.off)
}

// baseWrite is SQLite's own xWrite of the file.
func baseWrite(tls *libc.TLS, pFile uintptr, pBuf uintptr, iAmt int32, iOfst int64) int32 {
	w := baseIO().FxWrite
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&w)))(tls, pFile, pBuf, iAmt, iOfst)
}

// buffer appends n bytes at p to pFile's buffer.
func buffer(tls *libc.TLS, f *walFile, p uintptr, n int64) bool {
	if f.len+n > f.cap {
		c := min(max(f.cap*2, 32<<10, f.len+n), walBufferMax)
		nb := libc.Xrealloc(tls, f.buf, libc.Tsize_t(c))
		if nb == 0 {
			return false
		}
		f.buf, f.cap = nb, c
	}
	copy(unsafe.Slice((*byte)(cmem(f.buf+uintptr(f.len))), n), unsafe.Slice((*byte)(cmem(p)), n))
	f.len += n
	return true
}

func walWrite(tls *libc.TLS, pFile uintptr, pBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := ext(pFile)
	n := int64(iAmt)
	if iOfst == f.end && f.end == f.tail { // the next frame's header or page, appended to the log
		switch {
		case f.expect == walExpectHeader && n == walFrameHeader:
			if f.len > 0 && f.len+n+f.page > walBufferMax { // the frame would not fit
				if rc := flush(tls, pFile); rc != sqlite3.SQLITE_OK {
					return rc
				}
			}
			if f.len == 0 {
				f.off = iOfst
			}
			if !buffer(tls, f, pBuf, n) {
				break
			}
			f.end += n
			f.tail = f.end
			f.expect = walExpectPage
			if binary.BigEndian.Uint32(unsafe.Slice((*byte)(cmem(pBuf)), walFrameHeader)[4:8]) != 0 {
				f.expect = walExpectCommitPage
			}
			return sqlite3.SQLITE_OK
		case f.expect != walExpectHeader && n > walFrameHeader && f.len+n <= walBufferMax:
			commit := f.expect == walExpectCommitPage
			if !buffer(tls, f, pBuf, n) {
				break
			}
			f.end += n
			f.tail = f.end
			f.page = n
			f.expect = walExpectHeader
			if commit {
				return flush(tls, pFile)
			}
			return sqlite3.SQLITE_OK
		}
	}
	if rc := flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	f.end = iOfst + n
	if iOfst == 0 || f.end > f.tail {
		f.tail = f.end
	}
	return baseWrite(tls, pFile, pBuf, iAmt, iOfst)
}

func walRead(tls *libc.TLS, pFile uintptr, pBuf uintptr, iAmt int32, iOfst int64) int32 {
	if rc := flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	r := baseIO().FxRead
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&r)))(tls, pFile, pBuf, iAmt, iOfst)
}

func walTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	if rc := flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	f := ext(pFile)
	f.end, f.tail = min(f.end, size), min(f.tail, size)
	t := baseIO().FxTruncate
	return (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&t)))(tls, pFile, size)
}

func walSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	if rc := flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return syncData(tls, pFile, baseIO().FxSync, flags, &walVFS.walSyncs)
}

// dbSync is the database file's xSync.
func dbSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	return syncData(tls, pFile, (*sqlite3.Tsqlite3_io_methods)(cmem(walVFS.db.base)).FxSync, flags, &walVFS.dbSyncs)
}

// syncData is SQLite's xSync (base) of the log and the database file with
// fdatasync(2) where SQLite's driver calls fsync(2). SQLite built for
// Linux by its own build system syncs with fdatasync; the transpiled
// driver was built without HAVE_FDATASYNC, so every sync also wrote the
// file's modification time through the file system's journal (a
// checkpoint runs 50 ms or more after the previous one, so the time has
// always changed). fdatasync writes the data and what reading it back
// needs (the file's size when it changed) and skips the timestamps; what
// a crash or power loss keeps is the same. The gain measured is small and
// within the noise of a shared machine (BENCHMARKS.md, "Single-event
// appends, third pass"). The first sync of a log SQLite has just created
// also syncs its directory (the file's name): SQLite's own xSync does
// that one.
func syncData(tls *libc.TLS, pFile uintptr, base uintptr, flags int32, count *atomic.Int64) int32 {
	u := (*sqlite3.TunixFile)(cmem(pFile))
	if u.FctrlFlags&sqlite3.UNIXFILE_DIRSYNC != 0 {
		return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&base)))(tls, pFile, flags)
	}
	for {
		err := syscall.Fdatasync(int(u.Fh))
		if err == nil {
			count.Add(1)
			return sqlite3.SQLITE_OK
		}
		errno, ok := err.(syscall.Errno)
		if ok && errno == syscall.EINTR {
			continue
		}
		if ok {
			u.FlastErrno = int32(errno)
		}
		return sqlite3.SQLITE_IOERR_FSYNC
	}
}

func walFileSize(tls *libc.TLS, pFile uintptr, pSize uintptr) int32 {
	if rc := flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	s := baseIO().FxFileSize
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&s)))(tls, pFile, pSize)
}

func walFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	if rc := flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	c := baseIO().FxFileControl
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&c)))(tls, pFile, op, pArg)
}

func walFetch(tls *libc.TLS, pFile uintptr, iOfst int64, iAmt int32, pp uintptr) int32 {
	if rc := flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		return rc
	}
	fe := baseIO().FxFetch
	return (*(*func(*libc.TLS, uintptr, int64, int32, uintptr) int32)(unsafe.Pointer(&fe)))(tls, pFile, iOfst, iAmt, pp)
}

func walClose(tls *libc.TLS, pFile uintptr) int32 {
	rc := flush(tls, pFile)
	f := ext(pFile)
	if f.buf != 0 {
		libc.Xfree(tls, f.buf)
		*f = walFile{}
	}
	c := baseIO().FxClose
	if rc2 := (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&c)))(tls, pFile); rc == sqlite3.SQLITE_OK {
		rc = rc2
	}
	return rc
}
