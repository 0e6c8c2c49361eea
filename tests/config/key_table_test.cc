// The key table against what users read: conf/ccfs.toml and docs/OPERATING.md's key table must list
// exactly the table's keys, in the right TOML table, with the same "live" marking. Adding a key
// to the table without documenting it (or documenting a key that is gone) fails here.
#include "config/keys.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ccfs/config.h"
#include "config/config_test_util.h"

namespace ccfs {
namespace {

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(CCFS_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct DocumentedKey {
  std::string table;    // conf/ccfs.toml only
  bool live = false;
  std::string comment;  // the paragraph above the key (conf/ccfs.toml) or the row (docs/OPERATING.md)
};

// conf/ccfs.toml: "[table]" headers, then per key a comment paragraph and "key = default".
std::map<std::string, DocumentedKey> KeysInShippedConf() {
  std::map<std::string, DocumentedKey> keys;
  std::string table, paragraph;
  for (const std::string& line : Lines(ReadSourceFile("conf/ccfs.toml"))) {
    if (line.empty()) {
      paragraph.clear();
    } else if (line[0] == '#') {
      paragraph += line + "\n";
    } else if (line[0] == '[') {
      table = line.substr(1, line.find(']') - 1);
      paragraph.clear();
    } else if (size_t eq = line.find(" = "); eq != std::string::npos) {
      std::string key = line.substr(0, eq);
      EXPECT_EQ(keys.count(key), 0u) << key << " is set twice in conf/ccfs.toml";
      keys[key] = {table, paragraph.find("Live.") != std::string::npos, paragraph};
      paragraph.clear();
    }
  }
  return keys;
}

// docs/OPERATING.md: the rows of the table headed "| key | default | live | meaning |".
std::map<std::string, DocumentedKey> KeysInOperating() {
  std::map<std::string, DocumentedKey> keys;
  bool in_table = false;
  for (const std::string& line : Lines(ReadSourceFile("docs/OPERATING.md"))) {
    if (line.rfind("| key | default | live |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    if (line.rfind("|---", 0) == 0) continue;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) {
      size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    if (cells.size() < 4) {
      ADD_FAILURE() << "docs/OPERATING.md key table row with fewer than 4 cells: " << line;
      continue;
    }
    EXPECT_TRUE(cells[2] == "yes" || cells[2] == "no") << line;
    keys[cells[0]] = {"", cells[2] == "yes", line};
  }
  return keys;
}

// Expects `documented` (read from `where`) to hold exactly the table's keys, each with the
// table's live flag and, when `check_table`, in the table's TOML table.
void ExpectExactlyTheTablesKeys(const std::map<std::string, DocumentedKey>& documented,
                                const std::string& where, bool check_table) {
  ASSERT_FALSE(documented.empty()) << where << ": no keys found";
  for (const config::KeySpec& key : config::AllKeys()) {
    SCOPED_TRACE(std::string(key.name));
    auto it = documented.find(std::string(key.name));
    ASSERT_NE(it, documented.end()) << "not documented in " << where;
    if (check_table) {
      EXPECT_EQ(it->second.table, key.table);
    }
    EXPECT_EQ(it->second.live, key.live) << where << " must mark exactly the live keys live:\n"
                                         << it->second.comment;
    EXPECT_FALSE(it->second.comment.empty()) << "set without a comment saying what it means";
  }
  for (const auto& [name, doc] : documented) {
    EXPECT_NE(config::FindKey(name), nullptr) << name << " is in " << where << " but not a key";
  }
}

TEST(KeyTableTest, EveryKeyIsInTheShippedConfInItsTableWithItsLiveMarking) {
  // A live key's paragraph says "Live."; the others do not.
  ExpectExactlyTheTablesKeys(KeysInShippedConf(), "conf/ccfs.toml", true);
}

TEST(KeyTableTest, EveryKeyIsInTheOperatingKeyTableWithItsLiveColumn) {
  ExpectExactlyTheTablesKeys(KeysInOperating(), "docs/OPERATING.md's key table", false);
}

TEST(KeyTableTest, NamesAreUniqueAndEveryKeyIsKnownAndRendered) {
  std::set<std::string_view> names;
  const std::string rendered = RenderConfig(Options{});
  for (const config::KeySpec& key : config::AllKeys()) {
    EXPECT_TRUE(names.insert(key.name).second) << key.name << " appears twice";
    EXPECT_TRUE(IsKnownKey(std::string(key.name))) << key.name;
    EXPECT_EQ(IsLiveKey(std::string(key.name)), key.live) << key.name;
    EXPECT_NE(rendered.find("\n" + std::string(key.name) + " = "), std::string::npos) << key.name;
    EXPECT_FALSE(key.doc.empty()) << key.name;
  }
}

// Each key's field is its own: writing one key through the table changes that field only.
TEST(KeyTableTest, EachKeyOwnsOneField) {
  Options other = AllNonDefault();
  // Not a valid combination with kernel_evict = false (AllNonDefault's), but every field differs.
  other.kernel_demote = "mix";
  Options all_copied;
  for (const config::KeySpec& key : config::AllKeys()) {
    Options one;
    config::CopyField(key, other, &one);
    config::CopyField(key, other, &all_copied);
    std::vector<std::string> changed;
    for (const config::KeySpec& k : config::AllKeys()) {
      if (!config::SameField(k, one, Options{})) changed.emplace_back(k.name);
    }
    EXPECT_EQ(changed, std::vector<std::string>{std::string(key.name)});
  }
  EXPECT_EQ(all_copied, other) << "a field of Options has no key in the table";
}

}  // namespace
}  // namespace ccfs
