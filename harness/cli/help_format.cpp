#include "cli/help_format.hpp"

#include "writers/text_wrap.hpp"

#include <algorithm>
#include <sstream>

namespace opbench {

std::string wrap_help(std::string_view text, std::size_t width) {
    std::string out;
    std::size_t begin = 0;
    while (true) {
        const std::size_t end = std::min(text.find('\n', begin), text.size());
        std::string lines = wrap_words(text.substr(begin, end - begin), 0, 0, width);
        if (!lines.empty()) lines.pop_back(); // the paragraph's own '\n' follows
        out += lines;
        if (end == text.size()) break;
        out += '\n';
        begin = end + 1;
    }
    return out;
}

std::size_t WrappingHelpFormatter::description_width() const {
    // Room beside the name column; at least 40 so a narrow terminal's help
    // stays readable rather than one word a line.
    const std::size_t column = get_column_width();
    return kTerminalColumns > column + 40 ? kTerminalColumns - column : 40;
}

std::string WrappingHelpFormatter::make_option_desc(const CLI::Option *opt) const {
    return wrap_help(CLI::Formatter::make_option_desc(opt), description_width());
}

std::string WrappingHelpFormatter::make_subcommand(const CLI::App *sub) const {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), wrap_help(sub->get_description(), description_width()),
                             get_column_width());
    return out.str();
}

std::string WrappingHelpFormatter::make_description(const CLI::App *app) const {
    return wrap_help(CLI::Formatter::make_description(app), kTerminalColumns);
}

std::string WrappingHelpFormatter::make_footer(const CLI::App *app) const {
    return wrap_help(CLI::Formatter::make_footer(app), kTerminalColumns);
}

} // namespace opbench
