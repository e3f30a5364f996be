//! The server's memory and CPU time, read from `/proc` (the harness runs on the same
//! machine as the server it loads).

/// Resident memory of the processes, summed, in bytes.
pub fn rss_bytes(pids: &[u32]) -> Option<u64> {
    pids.iter().map(|pid| one_rss(*pid)).sum()
}

fn one_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_vm_rss(&status)
}

fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// User plus system CPU time of the processes, summed, in seconds.
pub fn cpu_secs(pids: &[u32]) -> Option<f64> {
    pids.iter().map(|pid| one_cpu(*pid)).sum()
}

/// The same, one figure per process.
pub fn cpu_secs_each(pids: &[u32]) -> Option<Vec<f64>> {
    pids.iter().map(|pid| one_cpu(*pid)).collect()
}

fn one_cpu(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_cpu_secs(&stat)
}

/// Fields 14 and 15 of `/proc/PID/stat`, in clock ticks of 1/100 s (Linux's USER_HZ).
fn parse_cpu_secs(stat: &str) -> Option<f64> {
    // The command name (field 2) may hold spaces; count fields after its closing paren.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// This process's soft limit of open files: every tab is one.
pub fn open_files_limit() -> Option<u64> {
    parse_open_files(&std::fs::read_to_string("/proc/self/limits").ok()?)
}

fn parse_open_files(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rss_and_cpu_from_proc_text() {
        assert_eq!(
            parse_vm_rss("Name:\tx\nVmRSS:\t  2048 kB\n"),
            Some(2 * 1024 * 1024)
        );
        assert_eq!(parse_vm_rss("Name:\tx\n"), None);
        let stat = "42 (chat server) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 4 0 1 2 3";
        assert_eq!(parse_cpu_secs(stat), Some(3.0));
    }

    #[test]
    fn reads_the_open_files_limit() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            20000                20000                files\n";
        assert_eq!(parse_open_files(limits), Some(20000));
        assert_eq!(
            parse_open_files("Max open files  unlimited  unlimited  files"),
            None
        );
        assert!(open_files_limit().is_some());
    }

    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        assert!(rss_bytes(&[me]).unwrap() > 0);
        assert!(cpu_secs(&[me]).is_some());
        assert_eq!(cpu_secs_each(&[me, me]).map(|v| v.len()), Some(2));
        assert_eq!(rss_bytes(&[]), Some(0));
    }
}
