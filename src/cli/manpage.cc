// ccfs manpage 1|5 [--conf FILE] [--out FILE]: prints ccfs.1 or ccfs.toml.5 in roff (man(7)).
//
// Hidden from --help: the build runs it (CMakeLists.txt, target ccfs_man) to write build/man/,
// so the pages are made from what the binary really has and cannot drift from it:
//   - ccfs.1 from the registered subcommands (CommandRegistry(), set up on a CLI::App exactly as
//     main.cc does): every subcommand's synopsis, description, options with their defaults and
//     its footer; the sections no table holds (signals, files, exit status, examples) are written
//     here, next to the code they describe only through daemon.h and main.cc;
//   - ccfs.toml.5 from the key table (config/keys.h AllKeys()): every key with its TOML table,
//     type, default (a default-constructed Options), the rule it must satisfy (in the words the
//     validator uses when it refuses a value) and whether it changes live. The long description
//     of each key is its paragraph in conf/ccfs.toml (--conf), the file users copy; without
//     --conf the table's one-line doc stands in.
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ccfs/codec.h"
#include "ccfs/config.h"
#include "ccfs/options.h"
#include "cli/command.h"
#include "config/keys.h"

namespace ccfs {
namespace {

struct ManpageArgs {
  int section = 1;
  std::string conf;  // conf/ccfs.toml, for the long description of each key
  std::string out;   // "" = stdout
};

// ---- roff text ---------------------------------------------------------------------------------

// `text` as roff running text: backslashes and hyphens escaped, a leading control character
// neutralized, and every non-ASCII character as a \[uXXXX] escape so the page needs no input
// encoding (groff without preconv reads Latin-1).
std::string Roff(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if ((c == '.' || c == '\'') && (out.empty() || out.back() == '\n')) {
      out += "\\&";
      out += static_cast<char>(c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // One UTF-8 sequence; a stray byte is shown as the replacement character.
      int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : -1;
      uint32_t cp = extra == 3 ? c & 0x07 : extra == 2 ? c & 0x0F : c & 0x1F;
      for (int k = 0; k < extra; ++k) {
        if (i + 1 >= text.size() || (static_cast<unsigned char>(text[i + 1]) & 0xC0) != 0x80) {
          extra = -1;
          break;
        }
        cp = (cp << 6) | (static_cast<unsigned char>(text[++i]) & 0x3F);
      }
      out += fmt::format("\\[u{:04X}]", extra < 0 ? 0xFFFDu : cp);
    }
  }
  return out;
}

// Like Roff, with `code` spans (as conf/ccfs.toml writes them) in bold.
std::string RoffWithCode(std::string_view text) {
  std::string out;
  bool code = false;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '`') {
      std::string piece = Roff(text.substr(start, i - start));
      out += code ? "\\fB" + piece + "\\fR" : piece;
      if (i < text.size()) code = !code;
      start = i + 1;
    }
  }
  return out;
}

std::string Bold(std::string_view text) { return "\\fB" + Roff(text) + "\\fR"; }
std::string Italic(std::string_view text) { return "\\fI" + Roff(text) + "\\fR"; }

// Paragraphs: blocks of text separated by empty lines.
std::string Paragraphs(const std::vector<std::string>& paragraphs, const char* separator) {
  std::string out;
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    if (i > 0) out += separator;
    out += RoffWithCode(paragraphs[i]) + "\n";
  }
  return out;
}

// .TH, then no hyphenation and a ragged right margin: option and key names must not be split.
std::string Header(const char* name, int section, const char* volume) {
  return fmt::format(".TH {} {} \"\" \"ccfs {}\" \"{}\"\n.nh\n.ad l\n", name, section, kVersion,
                     volume);
}

// ---- ccfs.1 ------------------------------------------------------------------------------------

// What an option takes, as CLI11 names it in --help ("TEXT", "UINT", "FLOAT"), without the
// validator's range.
std::string ValueName(const CLI::Option* opt) {
  std::string type = opt->get_type_name();
  return type.substr(0, type.find_first_of(": "));
}

// A positional argument in capitals, as the pages refer to them (DATASET, MOUNTPOINT).
std::string PositionalName(const CLI::Option* opt) {
  std::string name = opt->get_name(true);
  for (char& c : name) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return name;
}

bool TakesMany(const CLI::Option* opt) { return opt->get_items_expected_max() > 1; }

// One option as the synopsis writes it: [-o TEXT ...], [-f], dataset, [target], settings...
std::string SynopsisItem(const CLI::Option* opt) {
  std::string item;
  if (opt->get_positional()) {
    item = Italic(PositionalName(opt)) + (TakesMany(opt) ? " \\&..." : "");
  } else {
    std::vector<std::string> names = opt->get_snames();
    for (auto& n : names) n = "-" + n;
    for (const auto& n : opt->get_lnames()) names.push_back("--" + n);
    item = Bold(names.front());
    if (opt->get_items_expected_max() > 0) item += " " + Italic(ValueName(opt));
    if (TakesMany(opt)) item += " \\&...";
  }
  return opt->get_required() ? item : "[" + item + "]";
}

// Every option but --help, in the order they were added.
std::vector<const CLI::Option*> VisibleOptions(const CLI::App* app) {
  const CLI::Option* help = app->get_help_ptr();
  return app->get_options([help](const CLI::Option* opt) { return opt != help; });
}

std::string Synopsis(const CLI::App* sub) {
  std::string line = Bold("ccfs " + sub->get_name());
  std::string positionals;
  for (const CLI::Option* opt : VisibleOptions(sub)) {
    (opt->get_positional() ? positionals : line) += " " + SynopsisItem(opt);
  }
  return line + positionals + "\n";
}

// A subcommand: its synopsis, what it does, each option, and its footer.
std::string CommandSection(const CLI::App* sub) {
  std::string out = ".SS " + Roff("ccfs " + sub->get_name()) + "\n";
  out += Synopsis(sub) + ".PP\n" + RoffWithCode(sub->get_description()) + ".\n";
  for (const CLI::Option* opt : VisibleOptions(sub)) {
    std::string term;
    if (opt->get_positional()) {
      term = Italic(PositionalName(opt));
    } else {
      for (const auto& n : opt->get_snames()) term += (term.empty() ? "" : ", ") + Bold("-" + n);
      for (const auto& n : opt->get_lnames()) term += (term.empty() ? "" : ", ") + Bold("--" + n);
      if (opt->get_items_expected_max() > 0) term += " " + Italic(ValueName(opt));
    }
    std::string text = opt->get_description();
    if (!opt->get_default_str().empty()) text += " (default: " + opt->get_default_str() + ")";
    out += ".TP\n" + term + "\n" + RoffWithCode(text) + "\n";
  }
  if (!sub->get_footer().empty()) out += ".PP\n" + RoffWithCode(sub->get_footer()) + "\n";
  return out;
}

std::string CommandPage(const CLI::App& app) {
  std::vector<const CLI::App*> subs = app.get_subcommands([](const CLI::App* sub) {
    return !sub->get_group().empty();  // hidden ones (this one) have no group
  });
  std::string out = Header("CCFS", 1, "User Commands");
  out += ".SH NAME\nccfs \\- " + Roff(kProgramSummary) + "\n";
  out += ".SH SYNOPSIS\n";
  for (const CLI::App* sub : subs) out += Synopsis(sub) + ".br\n";
  out += Bold("ccfs") + " " + Italic("DATASET") + " " + Italic("MOUNTPOINT") + " [" + Bold("-o") +
         " " + Italic("OPTIONS") + "]\n.br\n";
  out += Bold("ccfs --version") + "\n";
  out += R"(.SH DESCRIPTION
\fBccfs mount\fR serves every file of the directory \fIDATASET\fR at \fIMOUNTPOINT\fR through its
own RAM page cache, split into a raw tier (plain page frames) and a compressed tier (lz4 or zstd
blobs), and reads the backing files with O_DIRECT on a miss. Writes go through to \fIDATASET\fR
before they are acknowledged. The cache's share of compressed pages can change while the mount is
in use (\fBccfs set\fR), or be chosen and held by ccfs itself (\fBcompressed_percent = auto\fR),
and \fBccfs stat\fR shows the hit ratio and the microseconds per buffer live, with the split the
estimator recommends (\fB\-\-splits\fR: its whole prediction).
.PP
Every setting is a key of \fBccfs.toml\fR(5): in the file given with \fB\-\-config\fR, as
\fB\-o\fR \fIkey\fR=\fIvalue\fR (which wins over the file), or written to
\fIMOUNTPOINT\fR/.ccfs/control on a running mount (live keys only).
.PP
Called as \fBccfs\fR \fIDATASET\fR \fIMOUNTPOINT\fR \fB\-o\fR \fIOPTIONS\fR (the form
\fBmount.fuse3\fR(8) uses for file system type \fBfuse.ccfs\fR), ccfs runs \fBccfs mount\fR.
Besides ccfs keys, \fIOPTIONS\fR may hold standard mount options (ro, noatime, allow_other, ...);
fstab-only words (nofail, _netdev, noauto, x\-systemd.*, ...) are ignored. Either way the mount
is nosuid,nodev unless \fIOPTIONS\fR say suid or dev.
.PP
Before mounting, \fBccfs mount\fR refuses a \fIDATASET\fR it cannot list or search (the daemon
serves with the caller's identity) and a \fIMOUNTPOINT\fR that is \fIDATASET\fR, lies inside it or
contains it. A \fIMOUNTPOINT\fR left mounted by a ccfs daemon that died is cleared (lazy unmount,
logged) and mounted again; another file system's dead mount there is refused.
.SH COMMANDS
)";
  for (const CLI::App* sub : subs) out += CommandSection(sub);
  out += R"(.SH OPTIONS
.TP
\fB\-h\fR, \fB\-\-help\fR
Print the options of ccfs or of one subcommand, and exit.
.TP
\fB\-\-version\fR
Print the version of ccfs, and exit.
.SH SIGNALS
A mount's daemon (its pid is in \fIMOUNTPOINT\fR/.ccfs/stats.json, "daemon" object) handles:
.TP
\fBSIGTERM\fR, \fBSIGINT\fR
Unmount cleanly and exit 0 (what \fBsystemctl stop\fR sends). Files still open lose their
connection.
.TP
\fBSIGHUP\fR
Read the \fB\-\-config\fR file again (with the \fB\-o\fR lists over it) and apply what can change
live; keys that need a remount are logged and left alone.
.TP
\fBSIGUSR1\fR
Log one line of statistics.
.PP
An unmount from outside (\fBumount\fR(8), \fBfusermount3 \-u\fR, \fBccfs umount\fR) also ends the
daemon with exit status 0.
.SH LOGGING
In the foreground (\fB\-f\fR) the daemon logs one line per event to standard error, prefixed
"ccfs: ". When standard error is the systemd journal (the stream \fBJOURNAL_STREAM\fR names), each
line instead starts with its syslog priority, \fB<3>\fR error, \fB<4>\fR warning, \fB<6>\fR
information, which journald keeps as the entry's priority. A detached daemon logs to syslog
(facility daemon, identifier ccfs).
.SH ENVIRONMENT
.TP
\fBJOURNAL_STREAM\fR
Set by systemd for a service whose output is the journal; see LOGGING.
.SH FILES
.TP
\fI/usr/share/doc/ccfs/examples/ccfs.toml\fR
Every key at its default, documented; copy it and pass it with \fB\-\-config\fR.
.TP
\fI/usr/share/doc/ccfs/examples/srv\-data.mount\fR
A systemd mount unit that mounts a dataset at boot, and the fstab line it mirrors.
.TP
\fIMOUNTPOINT\fR/.ccfs/stats.json
Every counter of a mount as JSON (hidden from directory listings; open it by name).
.TP
\fIMOUNTPOINT\fR/.ccfs/control
Takes \fIkey\fR=\fIvalue\fR lines of live keys; a read returns "ok" or "error: \fImessage\fR" for
the last write of the same open file.
.TP
\fI/etc/fstab\fR
\fIDATASET MOUNTPOINT\fR fuse.ccfs \fIkey\fR=\fIvalue\fR,... 0 0
.SH EXIT STATUS
.TP
0
Success; for the daemon, it was unmounted or stopped by SIGTERM or SIGINT.
.TP
1
Failure: the mount could not be made (the message names the key, file, line or path), the
daemon failed, a setting was refused, or a run failed.
.TP
2
A usage error: an unknown subcommand or option, a missing argument, a bad value, or arguments
that do not go together. One line on standard error names the word, and a second points to
\fB\-\-help\fR.
.SH EXAMPLES
Mount a dataset with 1 GiB of cache (half of it compressed with zstd, the default), and watch it:
.PP
.nf
.RS
ccfs mount \-o memory=1GiB /srv/dataset /srv/data
ccfs stat /srv/data \-i 2
.RE
.fi
.PP
Give the compressed tier more room and switch to lz4 (cheaper per page, fewer pages kept)
without a remount, then unmount:
.PP
.nf
.RS
ccfs set /srv/data compressed_percent=70 compressor=lz4
ccfs umount /srv/data
.RE
.fi
.PP
Load a directory into the cache before its readers come, and see how much of it is cached:
.PP
.nf
.RS
ccfs warmup /srv/data models/
ccfs warmup \-\-check /srv/data models/
.RE
.fi
.PP
Mount it at boot: the line in \fI/etc/fstab\fR (or the unit
\fI/usr/share/doc/ccfs/examples/srv\-data.mount\fR):
.PP
.nf
.RS
/srv/dataset /srv/data fuse.ccfs memory=1GiB 0 0
.RE
.fi
.PP
Replay an 80/20 trace through the mount for a minute:
.PP
.nf
.RS
ccfs replay /srv/data \-\-dist pareto \-\-duration 60
.RE
.fi
.PP
Before mounting, ask whether ccfs pays at all against the page cache alone with 1 GiB, and which
raw tier, share and codec to use, for an 80/20 workload (a table with each prediction's band, a
verdict, and out/advise.csv and out/advise.png):
.PP
.nf
.RS
ccfs advise /srv/dataset \-\-memory 1GiB \-\-dist pareto \-\-exact \-\-out out
.RE
.fi
.SH SEE ALSO
\fBccfs.toml\fR(5), \fBmount.fuse3\fR(8), \fBfusermount3\fR(1), \fBfstab\fR(5),
\fBsystemd.mount\fR(5), \fBjournalctl\fR(1)
)";
  return out;
}

// ---- ccfs.toml.5 -------------------------------------------------------------------------------

// What conf/ccfs.toml says: the opening comment (after its title line) as paragraphs, and per key
// the comment paragraph above it, with its lines joined.
struct ConfDocs {
  std::vector<std::string> intro;
  std::map<std::string, std::string> keys;
};

bool ReadConfDocs(const std::string& path, ConfDocs* docs, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot read";
    return false;
  }
  std::string paragraph;
  bool in_intro = true, title_skipped = false;
  auto flush_intro = [&] {
    if (!paragraph.empty()) docs->intro.push_back(paragraph);
    paragraph.clear();
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind('#', 0) == 0) {
      std::string text = line.size() > 2 ? line.substr(2) : "";
      if (in_intro && !title_skipped) {
        title_skipped = true;  // "# ccfs.toml — ...": the page's NAME says it
      } else if (text.empty()) {
        if (in_intro) flush_intro();
      } else {
        paragraph += (paragraph.empty() ? "" : " ") + text;
      }
    } else if (line.rfind('[', 0) == 0 || line.empty()) {
      if (in_intro) flush_intro();
      in_intro &= line.empty();
      paragraph.clear();
    } else if (size_t eq = line.find(" = "); eq != std::string::npos) {
      docs->keys[line.substr(0, eq)] = paragraph;
      paragraph.clear();
    }
  }
  return true;
}

std::string TypeText(const config::KeySpec& key) {
  switch (config::TypeOf(key)) {
    case config::KeyType::kSize:
      return "size (bytes, or a string with a unit)";
    case config::KeyType::kInt:
      return key.rule.kind == config::Rule::kCodecLevel ? "integer (level)" : "integer";
    case config::KeyType::kDouble:
      return key.rule.kind == config::Rule::kSeconds ? "number (seconds)" : "number (percent)";
    case config::KeyType::kBool:
      return "boolean";
    case config::KeyType::kCodec:
      return "string (" + config::CodecChoices(true) + ")";
    case config::KeyType::kString:
      return "string";
  }
  return "value";
}

// The rule as the validator words it when it refuses a value ("must be between 0 and 95").
std::string RangeText(const config::KeySpec& key) {
  const Options defaults;
  switch (key.rule.kind) {
    case config::Rule::kAny:
      return config::TypeOf(key) == config::KeyType::kBool ? "true or false" : "any";
    case config::Rule::kCodecLevel: {
      std::string out;
      for (CodecKind kind : AllCodecKinds()) {
        CodecLevels levels = CodecLevelRange(kind);
        out += fmt::format("{}{}: {} to {}", out.empty() ? "" : "; ", CodecName(kind), levels.min,
                           levels.max);
      }
      return out;
    }
    default:
      break;
  }
  // "key = : must be ..." for an empty value: keep what follows "must be ".
  std::string message = config::OutOfRange(defaults, key, "").message();
  size_t colon = message.find(": ");
  std::string rule = colon == std::string::npos ? message : message.substr(colon + 2);
  if (rule.rfind("must be ", 0) == 0) rule.erase(0, 8);
  if (key.rule.kind == config::Rule::kMemory) {
    rule += fmt::format(", and the raw tier must hold at least {} pages of page_size",
                        config::kMinRawPages);
  }
  return rule;
}

std::string KeyEntry(const config::KeySpec& key, const ConfDocs& docs) {
  const Options defaults = MountDefaults();
  auto long_doc = docs.keys.find(std::string(key.name));
  std::string text = long_doc != docs.keys.end() && !long_doc->second.empty()
                         ? long_doc->second
                         : std::string(key.doc);
  std::string out = ".TP\n" + Bold(key.name) + " = " +
                    Roff(config::FormatValue(key, defaults, config::ValueStyle::kToml)) + "\n";
  out += RoffWithCode(text) + "\n";
  out += ".RS\n.PD 0\n";
  auto field = [&](const char* name, const std::string& value) {
    out += fmt::format(".TP 10\n{}\n{}\n", name, Roff(value));
  };
  field("Table:", "[" + std::string(key.table) + "]");
  field("Type:", TypeText(key));
  field("Default:", config::FormatValue(key, defaults, config::ValueStyle::kToml));
  field("Range:", RangeText(key));
  field("Live:", key.live ? "yes: .ccfs/control, ccfs set and SIGHUP change it on a running mount"
                          : "no: takes effect at the next mount");
  out += ".PD\n.RE\n";
  return out;
}

std::string ConfigPage(const ConfDocs& docs) {
  std::string out = Header("CCFS.TOML", 5, "File Formats");
  out += ".SH NAME\nccfs.toml \\- the configuration file of \\fBccfs\\fR(1)\n";
  out += ".SH SYNOPSIS\nEvery key at its default:\n.PP\n.nf\n";
  for (const std::string& table : config::Tables()) {
    out += "[" + Roff(table) + "]\n";
    for (const config::KeySpec& key : config::AllKeys()) {
      if (key.table == table) {
        out += Roff(key.name) + " = " +
               Roff(config::FormatValue(key, MountDefaults(), config::ValueStyle::kToml)) + "\n";
      }
    }
  }
  out += ".fi\n.SH DESCRIPTION\n";
  out += "\\fBccfs mount \\-\\-config\\fR \\fIFILE\\fR reads these keys from a TOML file; the same "
         "names work as \\fB\\-o\\fR \\fIkey\\fR=\\fIvalue\\fR and, for live keys, in "
         "\\fIMOUNTPOINT\\fR/.ccfs/control (see \\fBccfs\\fR(1)).\n";
  if (!docs.intro.empty()) out += ".PP\n" + Paragraphs(docs.intro, ".PP\n");
  out += ".PP\nA bad file stops the mount before anything is mounted, with a message naming the "
         "file, line and key, e.g.\n.PP\n.RS\nccfs.toml:7: compressed_percent = 120: must be "
         "between 0 and 95\n.RE\n";
  out += ".SH KEYS\n";
  for (const std::string& table : config::Tables()) {
    out += ".SS [" + Roff(table) + "]\n";
    for (const config::KeySpec& key : config::AllKeys()) {
      if (key.table == table) out += KeyEntry(key, docs);
    }
  }
  out += R"(.SH FILES
.TP
\fI/usr/share/doc/ccfs/examples/ccfs.toml\fR
Every key at its default, with the descriptions above.
.SH SEE ALSO
\fBccfs\fR(1), \fBmount.fuse3\fR(8)
)";
  return out;
}

// ---- the subcommand ----------------------------------------------------------------------------

int RunManpage(const ManpageArgs& args) {
  std::string page;
  if (args.section == 1) {
    // The same application main.cc builds, so every registered subcommand and option is here.
    CLI::App app{kProgramSummary};
    for (auto& entry : CommandRegistry()) {
      CLI::App* sub = app.add_subcommand(entry.name, entry.description);
      entry.setup(sub);
    }
    page = CommandPage(app);
  } else {
    ConfDocs docs;
    std::string error;
    if (!args.conf.empty() && !ReadConfDocs(args.conf, &docs, &error)) {
      fprintf(stderr, "ccfs manpage: %s\n", error.c_str());
      return 1;
    }
    page = ConfigPage(docs);
  }
  if (args.out.empty()) {
    fwrite(page.data(), 1, page.size(), stdout);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  std::ofstream out(args.out, std::ios::trunc);
  out << page;
  out.close();
  if (!out) {
    fprintf(stderr, "ccfs manpage: cannot write %s\n", args.out.c_str());
    return 1;
  }
  return 0;
}

CommandRegistrar reg_manpage("manpage", "print the manual page ccfs.1 or ccfs.toml.5 in roff",
                     [](CLI::App* app) {
  auto args = std::make_shared<ManpageArgs>();
  app->group("");  // for the build, not for users: not listed by --help
  app->add_option("section", args->section, "1 (ccfs.1) or 5 (ccfs.toml.5)")
      ->required()
      ->check(CLI::IsMember(std::vector<int>{1, 5}));
  app->add_option("--conf", args->conf,
                  "conf/ccfs.toml, whose comment paragraphs describe the keys (section 5)");
  app->add_option("--out", args->out, "write the page here instead of stdout");
  return [args] { return RunManpage(*args); };
});

}  // namespace
}  // namespace ccfs
