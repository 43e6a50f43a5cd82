// opbench's --help, fitted to the terminal. CLI11 2.1 prints each
// description on one line: `opbench run --help` reached 378 columns.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace opbench {

// `text` word-wrapped to `width` columns, its own line breaks kept; no
// trailing newline, as CLI11 writes descriptions.
[[nodiscard]] std::string wrap_help(std::string_view text, std::size_t width);

// Options' and subcommands' descriptions wrapped beside their names (CLI11
// indents a description's later lines to the name column's width), and a
// command's description and footer wrapped to the terminal. Set on the top
// App before subcommands are added: each copies its parent's formatter.
class WrappingHelpFormatter : public CLI::Formatter {
  public:
    std::string make_option_desc(const CLI::Option *opt) const override;
    std::string make_subcommand(const CLI::App *sub) const override;
    std::string make_description(const CLI::App *app) const override;
    std::string make_footer(const CLI::App *app) const override;

  private:
    std::size_t description_width() const;
};

} // namespace opbench
